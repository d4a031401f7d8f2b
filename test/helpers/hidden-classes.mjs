// Run by test/listen/hidden-classes.test.ts under `node --log-maps`: listen (built, in dist/) takes `count`
// signed deliveries straight, with its page's WebSocket open, then `count` more through a relay, forwarding each
// to an app. V8 logs each hidden class it makes; the test counts them per delivery.
// node hidden-classes.mjs <count>; prints "done" once every delivery was answered.
import { mkdtemp, rm } from 'node:fs/promises';
import { Agent, createServer, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { signPayload } from '../../dist/contract/index.js';
import { startListen } from '../../dist/listen/index.js';
import { startRelayServer } from '../../dist/relay/index.js';
import WebSocket from 'ws';

const count = Number(process.argv[2]);
const secret = 'whsec_hidden_classes';

const app = createServer((req, res) => {
  req.resume();
  req.on('end', () => res.writeHead(200, { 'content-type': 'text/plain' }).end('ok'));
});
await new Promise((resolve) => app.listen(0, '127.0.0.1', resolve));
const forwardTo = `http://127.0.0.1:${app.address().port}`;
const dir = await mkdtemp(join(tmpdir(), 'clockhook-classes-'));

/** `count` deliveries, eight at a time, each with an event id of its own, signed with `key`. */
async function deliver(url, key, prefix) {
  const agent = new Agent({ keepAlive: true, maxSockets: 8 });
  const send = (i) =>
    new Promise((resolve, reject) => {
      const body = JSON.stringify({
        id: `evt_${prefix}${i}`,
        object: 'event',
        type: 'punch.created',
        api_version: '2026-11-01',
        created: 1_790_000_000,
        data: { n: i },
      });
      const headers = {
        'content-type': 'application/json',
        'x-service-signature': signPayload({ payload: body, secret: key }),
      };
      const req = request(url, { method: 'POST', agent, headers }, (res) => {
        res.resume();
        res.on('end', () => (res.statusCode === 200 ? resolve() : reject(new Error(`answered ${res.statusCode}`))));
      });
      req.on('error', reject);
      req.end(body);
    });
  for (let i = 0; i < count; i += 8) await Promise.all(Array.from({ length: 8 }, (_, k) => send(i + k)));
  agent.destroy();
}

const base = { forwardTo, port: 0, onDelivery: () => {} };
const direct = await startListen({ ...base, inspectorPort: 0, secret, stateDir: join(dir, 'direct') });
const page = new URL(direct.ready.inspector);
const socket = new WebSocket(`ws://${page.host}/ws?token=${page.searchParams.get('token')}`);
let messages = 0;
socket.on('message', () => (messages += 1));
await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
await deliver(direct.ready.listener, secret, 'd');
while (messages < count) await new Promise((resolve) => setTimeout(resolve, 20));
socket.close();
await direct.close();

const relay = await startRelayServer({ port: 0, host: '127.0.0.1' });
const relayed = await startListen({
  ...base,
  inspector: false,
  relay: relay.url,
  sandboxPort: 0,
  stateDir: join(dir, 'relayed'),
});
await deliver(relayed.ready.publicUrl, relayed.secret ?? '', 'r');
await relayed.close();
await relay.close();

app.close();
await rm(dir, { recursive: true, force: true });
process.stdout.write('done\n');
