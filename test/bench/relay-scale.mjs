// npm run bench:relay: the relay with many channels (issue 56). N listeners over the relay's own protocol from
// this process, at 100, 1,000 and 10,000 channels, one relay and two on one redis-server (the requests
// entering the instance the listeners are not on); 200 requests a second spread over 100 of them. Prints
// RSS, connect time, p50/p99 and the idle Redis commands a second. Plain ESM over dist/ (built first).
import { readFile } from 'node:fs/promises';
import { Agent, request } from 'node:http';
import { connect } from 'node:net';
import { connectFakeListeners } from '../helpers/fake-listeners.mjs';
import { folder, spawnClockhook, startRedisServer } from './subjects.mjs';

const COUNTS = (process.env.RELAY_BENCH_COUNTS ?? '100,1000,10000').split(',').map(Number);
const RATE = 200;
const SECONDS = 10;
const IDLE_SECONDS = 10;
const say = (line) => console.error(line);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function rssMiB(pid) {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)[1]) / 1024;
}

/** POSTs `body` to `url` on `agent`; resolves with the ms it took, or rejects. */
function timedPost(url, body, agent) {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', agent, headers: { 'content-type': 'application/json' } }, (res) => {
      res.resume();
      res.on('end', () =>
        res.statusCode === 200 ? resolve(performance.now() - started) : reject(new Error(`${res.statusCode}`)),
      );
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** RATE requests a second for SECONDS, each to one of the first 100 listeners' URLs on `entry`. */
async function traffic(listeners, entry) {
  const agent = new Agent({ keepAlive: true, maxSockets: 64 });
  const targets = listeners.slice(0, 100).map((l) => `${entry}${new URL(l.publicUrl).pathname}/hooks`);
  const body = JSON.stringify({ id: 'evt_bench', type: 'punch.created', data: { note: 'x'.repeat(1500) } });
  const times = [];
  let failed = 0;
  const sent = [];
  const started = performance.now();
  for (let i = 0; i < RATE * SECONDS; i++) {
    const due = started + (i * 1000) / RATE;
    const wait = due - performance.now();
    if (wait > 0) await sleep(wait);
    sent.push(
      timedPost(targets[i % targets.length], body, agent).then(
        (ms) => times.push(ms),
        () => (failed += 1),
      ),
    );
  }
  await Promise.all(sent);
  agent.destroy();
  times.sort((a, b) => a - b);
  const at = (q) => times[Math.min(times.length - 1, Math.floor(q * times.length))];
  return { p50: at(0.5), p99: at(0.99), failed };
}

/** Redis commands a second while nothing is sent: INFO's total_commands_processed over IDLE_SECONDS. */
async function idleCommands(redisUrl) {
  const port = Number(new URL(redisUrl).port);
  const processed = () =>
    new Promise((resolve, reject) => {
      const socket = connect(port, '127.0.0.1', () => socket.write('INFO stats\r\n'));
      let text = '';
      socket.on('data', (chunk) => {
        text += chunk;
        const found = /total_commands_processed:(\d+)/.exec(text);
        if (found) {
          socket.destroy();
          resolve(Number(found[1]));
        }
      });
      socket.on('error', reject);
    });
  const before = await processed();
  await sleep(IDLE_SECONDS * 1000);
  return ((await processed()) - before - 1) / IDLE_SECONDS;
}

/** One row: `instances` relays (on one Redis when 2), `count` listeners on the first. */
async function row(count, instances) {
  const dir = await folder();
  const redis = instances > 1 ? await startRedisServer() : null;
  const args = ['relay', '--json', '--port', '0', '--host', '127.0.0.1', '--max-channels', String(count + 100)];
  const relays = Array.from({ length: instances }, () =>
    spawnClockhook([...args, ...(redis ? ['--redis', redis.url] : [])], dir),
  );
  const ready = await Promise.all(relays.map((relay) => relay.ready));
  const connectStarted = performance.now();
  const fake = await connectFakeListeners(ready[0].url, count);
  const connectMs = performance.now() - connectStarted;
  await sleep(2000);
  const rss = await Promise.all(relays.map((relay) => rssMiB(relay.child.pid)));
  const idle = redis ? await idleCommands(redis.url) : null;
  const { p50, p99, failed } = await traffic(fake.listeners, ready.at(-1).url);
  fake.close();
  await Promise.all(relays.map((relay) => relay.stop()));
  await redis?.stop();
  return { count, instances, rss, connectMs, p50, p99, failed, idle };
}

const rows = [];
for (const count of COUNTS)
  for (const instances of [1, 2]) {
    say(`${count} channels, ${instances === 1 ? 'one relay' : 'two relays on Redis, requests crossing'}…`);
    rows.push(await row(count, instances));
  }

const fixed = (n, digits = 1) => (n === null ? '–' : n.toFixed(digits));
/**
 * A channel's memory: the growth of the first relay's RSS from the smallest row to this one, per channel
 * added (one process's RSS moves by a few MiB between runs of the same load: the smallest row is the base).
 */
const perChannelKB = (r) => {
  const base = rows.find((b) => b.instances === r.instances);
  return r === base ? null : ((r.rss[0] - base.rss[0]) * 1024) / (r.count - base.count);
};
console.log(
  '| channels | relays | RSS (MiB) | per channel | connect all | p50 / p99 (ms) | failed | idle Redis cmds/s |',
);
console.log('|---|---|---|---|---|---|---|---|');
for (const r of rows)
  console.log(
    `| ${r.count.toLocaleString('en')} | ${r.instances === 1 ? 'one' : 'two on Redis'} | ${r.rss.map((m) => fixed(m, 0)).join(' / ')} | ${fixed(perChannelKB(r))} KB | ${fixed(r.connectMs / 1000)} s | ${fixed(r.p50)} / ${fixed(r.p99)} | ${r.failed} | ${fixed(r.idle)} |`,
  );
