// WEBHOOK_SECRET=$(npx clockhook secret) node server.mjs, then: npx clockhook listen --forward-to 3000/webhooks
import { createApp } from './app.mjs';

const app = createApp({
  secret: process.env.WEBHOOK_SECRET,
  handle: async (event) => console.log('took', event.type, event.id),
});
app.listen(Number(process.env.PORT ?? 3000), () => console.log('listening'));
