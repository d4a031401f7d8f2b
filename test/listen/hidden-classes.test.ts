import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/sandbox.js';

// V8 gives an object a hidden class (a "map") by the order its properties were added, and shares it among objects
// made alike. A literal that starts with a spread and adds a property (`{ ...capture, forward }`) makes a new one
// every time instead: slower to make and to read, and one more object to collect for every delivery. This counts,
// with V8's own log of each map it makes, the maps a delivery costs listen and the relay: none, once warm.
const CHILD = fileURLToPath(new URL('../helpers/hidden-classes.mjs', import.meta.url));
const DELIVERIES = 200;

/**
 * How many hidden classes V8 made for each property added (its log's map events that name one): the ids of
 * captures and events counted as one (`cap_*`), since an object keyed by them is given a new one for each id.
 */
function mapsByProperty(log: string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const line of log.split('\n')) {
    const property = line.slice(line.lastIndexOf(',') + 1).replace(/^(cap|evt)_.*/, '$1_*');
    if (!line.startsWith('map,') || property === '') continue;
    counts.set(property, (counts.get(property) ?? 0) + 1);
  }
  return counts;
}

describe('hidden classes', () => {
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let counts: Map<string, number>;

  beforeAll(async () => {
    dir = await tempDir();
    const logfile = join(dir.path, 'v8.log');
    const flags = ['--log-maps', '--no-log-maps-details', `--logfile=${logfile}`, '--no-logfile-per-isolate'];
    const args = [...flags, CHILD, String(DELIVERIES)];
    const { stdout } = await promisify(execFile)(process.execPath, args, { timeout: 50_000 });
    expect(stdout).toBe('done\n');
    counts = mapsByProperty(await readFile(logfile, 'utf8'));
  }, 60_000);
  afterAll(() => dir?.remove());

  it('listen, its page and the relay make no hidden class per delivery', () => {
    // DELIVERIES went straight to listen (its page open) and as many through the relay: a map made for each
    // delivery shows that many times or more. The log does record them: starting the modules makes hundreds.
    expect([...counts.values()].reduce((sum, n) => sum + n, 0)).toBeGreaterThan(DELIVERIES);
    const perDelivery = [...counts].filter(([, n]) => n >= DELIVERIES).map(([property, n]) => `${property}: ${n}`);
    expect(perDelivery).toEqual([]);
  });
});
