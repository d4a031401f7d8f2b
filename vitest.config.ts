import { defineConfig } from 'vitest/config';

/**
 * `expect.poll` gives up after 1 s by default. On a CI machine whose two cores are shared by the test, its
 * servers and a browser, a step that takes 50 ms on a quiet laptop can take over a second: 4 s, so that a
 * poll's own message (what it waited for) still comes before the 5 s test timeout. `vi.waitFor` is not
 * configurable here; its calls pass `eventually` from test/helpers/eventually.ts.
 */
export default defineConfig({
  test: {
    expect: { poll: { timeout: 4_000 } },
  },
});
