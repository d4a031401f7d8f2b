import { availableParallelism } from 'node:os';
import { configDefaults, defineConfig } from 'vitest/config';

/**
 * Test files run two at a time even on two cores, where vitest would run one (cores − 1): the suite mostly
 * waits (on child processes, servers, fsyncs and browsers), so two at a time take little more than half as
 * long, every test passing with one core kept busy by another process too.
 */
const maxWorkers = Math.max(2, availableParallelism() - 1);

/**
 * Timeouts for an integration suite on a two-core CI machine shared by the tests, their servers, child
 * processes and browsers. vitest's defaults (5 s a test, 1 s for `expect.poll`) are made for unit tests:
 * a test that runs the CLI nine times in a row takes 3.4 s on a quiet machine and over 5 s with half of it
 * busy, and a step of 50 ms can take a second. A poll gives up after 4 s, well inside its test's time, so
 * that its own message (what it waited for) is the one reported. `vi.waitFor` is not configurable here;
 * its calls pass `eventually` from test/helpers/eventually.ts.
 */
export default defineConfig({
  test: {
    // The examples have tests of their own, run in their folder by test/examples/ once their packages are installed.
    exclude: [...configDefaults.exclude, 'examples/**'],
    maxWorkers,
    testTimeout: 15_000,
    hookTimeout: 20_000,
    expect: { poll: { timeout: 4_000 } },
  },
});
