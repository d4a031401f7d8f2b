import { procCpuMs } from '../helpers/clockhook-process.mjs';
import { figures, load } from './load.mjs';
import { folder, spawnClockhook, startApp, connectInspector, proxySubject } from './subjects.mjs';
import { SECRET } from './traffic.mjs';
const app = await startApp();
async function measure(name, args, { inspector = true } = {}) {
  const dir = await folder();
  const p = spawnClockhook(
    ['listen', '--port', '0', '--inspector-port', '0', '--secret', SECRET, '--no-open', ...args],
    dir,
  );
  const ready = await p.ready;
  let ws = null;
  if (inspector && ready.inspector) {
    ws = await connectInspector(ready.inspector);
    await ws.snapshot;
  }
  await load(ready.listener, { secret: SECRET, duration: 2 });
  const c0 = await procCpuMs(p.child.pid);
  const r = figures(await load(ready.listener, { secret: SECRET, duration: 5 }));
  const c1 = await procCpuMs(p.child.pid);
  console.log(name.padEnd(40), r.requestsPerSecond, 'req/s', Math.round(((c1 - c0) * 1000) / r.total), 'us/req');
  ws?.socket.close();
  await p.stop();
}
const b = await proxySubject(app, 'keepalive');
await load(b.url, { secret: SECRET, duration: 2 });
const c0 = await procCpuMs(b.pids[0]);
const r = figures(await load(b.url, { secret: SECRET, duration: 5 }));
console.log(
  'bare proxy'.padEnd(40),
  r.requestsPerSecond,
  'req/s',
  Math.round((((await procCpuMs(b.pids[0])) - c0) * 1000) / r.total),
  'us/req',
);
await b.close();
await measure('C --json, page', ['--json', '--forward-to', app.url]);
await measure('C --json, no page', ['--json', '--forward-to', app.url, '--no-inspector'], { inspector: false });
await measure('C --json, no page, capture-only', ['--json', '--no-inspector'], { inspector: false });
await app.close();
