// npm run bench:compare -- <checkout>: this build's listen against another build's, loaded in turns, the way
// docs/performance.md compares a change with the commit before it. A whole `npm run bench` on each build
// compares runs minutes apart, and this VM's speed drifts by more than most changes move; here both listens run
// side by side, each round of load going to one and then the other, once in each order. <checkout>: another
// commit's folder, built (see docs/performance.md, "How to measure"). `--no-page`: no inspector page connected; `--repeated`:
// one event id over and over. BENCH_DURATION and BENCH_ROUNDS set each order's length, as for the bench.
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { interleaved } from './load.mjs';
import { listenSubject, startApp } from './subjects.mjs';

const [other] = process.argv.slice(2).filter((arg) => !arg.startsWith('--'));
const otherBin = other && resolve(other, 'bin/clockhook.js');
if (!otherBin || !existsSync(resolve(other, 'dist/cli/main.js'))) {
  const why = !other ? '' : existsSync(other) ? ` (no dist/ in ${other}: npm run build there first)` : ` (no ${other})`;
  console.error(`usage: npm run bench:compare -- <checkout of another commit, built>${why}`);
  process.exit(2);
}
const options = {
  page: !process.argv.includes('--no-page'),
  traffic: process.argv.includes('--repeated') ? 'repeated' : 'unique',
};

const app = await startApp();
const cpu = { here: [], there: [] };
for (const order of [
  ['here', 'there'],
  ['there', 'here'],
]) {
  const subjects = await Promise.all(
    order.map((build) => listenSubject(app, { ...options, bin: build === 'there' ? otherBin : undefined })),
  );
  const rows = await interleaved(subjects);
  for (const [i, build] of order.entries()) cpu[build].push(rows[i].forwarderCpuUsPerRequest);
  const said = order.map((build) => `${build === 'here' ? 'this build' : other} ${cpu[build].at(-1)} µs a delivery`);
  console.log(`in turns, ${said.join(' first, then ')}`);
}
await app.close();
const mean = (values) => values.reduce((a, b) => a + b, 0) / values.length;
const ratio = mean(cpu.here) / mean(cpu.there);
console.log(
  `this build / ${other}: ${ratio.toFixed(3)} the CPU a delivery (each order: ${cpu.here.map((here, i) => (here / cpu.there[i]).toFixed(3)).join(', ')})`,
);
