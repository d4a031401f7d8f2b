// A receiver of the time-tracking service's webhooks in Express: it verifies every signature over the raw
// body, answers 2xx only once it has taken the event, and acts on each event id once (the service may
// deliver an event more than once).
import express from 'express';
import { verifySignature } from 'clockhook';

/**
 * `secret`: the endpoint's (or a function that returns it); `handle(event)` does the work; `seen` remembers
 * the event ids taken (a database table in a real app).
 */
export function createApp({ secret, handle = async () => {}, seen = new Set() }) {
  const secretOf = typeof secret === 'function' ? secret : () => secret;
  const app = express();
  // express.raw keeps the exact bytes: the signature is over them, not over a re-serialized object.
  app.post('/webhooks', express.raw({ type: '*/*' }), async (req, res) => {
    const check = verifySignature({ header: req.get('x-service-signature'), payload: req.body, secret: secretOf() });
    if (!check.ok) return res.status(400).json({ error: check.reason });
    const event = JSON.parse(req.body.toString('utf8'));
    if (seen.has(event.id)) return res.status(200).json({ duplicate: true });
    await handle(event);
    seen.add(event.id);
    res.status(200).json({ received: true });
  });
  return app;
}
