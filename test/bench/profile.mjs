// npm run bench:profile: where the listener's CPU goes under the bench's load (C: an inspector page connected,
// each request its own event id, or `--repeated` for one id). Runs listen with --cpu-prof, loads it for
// BENCH_DURATION seconds, and prints the functions and files with the most self time. docs/performance-notes.md
// keeps the top entries before and after each change to the hot path. `--relay` profiles the relay of D
// instead; PROFILE_KEEP=<file> keeps the .cpuprofile (for Chrome's DevTools, or a closer look).
import { copyFile, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DURATION, figures, load } from './load.mjs';
import { listenSubject, relaySubject, startApp } from './subjects.mjs';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const traffic = process.argv.includes('--repeated') ? 'repeated' : 'unique';
// --no-page: no inspector page connected (its WebSocket messages are part of what C costs).
const page = !process.argv.includes('--no-page');
const TOP = Number(process.env.PROFILE_TOP ?? 25);

/** Self time per function and per file of a .cpuprofile, as shares of all samples. */
function selfTimes(profile) {
  const byNode = new Map(profile.nodes.map((node) => [node.id, node]));
  const counts = new Map();
  for (const id of profile.samples) counts.set(id, (counts.get(id) ?? 0) + 1);
  const functions = new Map();
  const files = new Map();
  for (const [id, n] of counts) {
    const { functionName, url, lineNumber } = byNode.get(id).callFrame;
    const file = url.startsWith('file://') ? relative(ROOT, fileURLToPath(url)) : url || '(native)';
    const name = `${functionName || '(anonymous)'} ${file}${url ? `:${lineNumber + 1}` : ''}`;
    functions.set(name, (functions.get(name) ?? 0) + n);
    files.set(file, (files.get(file) ?? 0) + n);
  }
  // Total time (self and all it calls) of clockhook's own functions, counted once per sample even when recursive.
  const parent = new Map();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const inclusive = new Map();
  for (const [id, n] of counts) {
    const seen = new Set();
    for (let at = id; at !== undefined; at = parent.get(at)) {
      const { functionName, url, lineNumber } = byNode.get(at).callFrame;
      if (!url.includes('/dist/')) continue;
      const name = `${functionName || '(anonymous)'} ${relative(ROOT, fileURLToPath(url))}:${lineNumber + 1}`;
      if (seen.has(name)) continue;
      seen.add(name);
      inclusive.set(name, (inclusive.get(name) ?? 0) + n);
    }
  }
  const total = profile.samples.length;
  const top = (map) =>
    [...map]
      .sort((a, b) => b[1] - a[1])
      .slice(0, TOP)
      .map(([name, n]) => `${((n / total) * 100).toFixed(1).padStart(5)} %  ${name}`);
  return { total, functions: top(functions), files: top(files), inclusive: top(inclusive) };
}

const profiles = await mkdtemp(join(tmpdir(), 'clockhook-profile-'));
const app = await startApp();
const profiled = ['--cpu-prof', `--cpu-prof-dir=${profiles}`];
// --relay: the relay of D (relay + listen --relay, one page connected) is profiled instead of listen.
const relay = process.argv.includes('--relay');
const subject = relay
  ? await relaySubject(app, { nodeArgs: profiled })
  : await listenSubject(app, { traffic, page, nodeArgs: profiled });
const result = figures(await load(subject.url, { traffic, secret: subject.secret, duration: DURATION }));
await subject.close();
await app.close();
const [file] = (await readdir(profiles)).filter((name) => name.endsWith('.cpuprofile'));
const { total, functions, files, inclusive } = selfTimes(JSON.parse(await readFile(join(profiles, file), 'utf8')));
console.log(
  `${relay ? 'the relay of D' : 'listen'} under ${traffic} traffic: ${result.requestsPerSecond} req/s, ${result.total} deliveries, ${total} samples`,
);
console.log(`\nSelf time by function (top ${TOP}):\n${functions.join('\n')}`);
console.log(`\nSelf time by file (top ${TOP}):\n${files.join('\n')}`);
console.log(`\nTotal time of clockhook's own functions, with all they call (top ${TOP}):\n${inclusive.join('\n')}`);
if (process.env.PROFILE_KEEP) await copyFile(join(profiles, file), process.env.PROFILE_KEEP);
await rm(profiles, { recursive: true, force: true });
