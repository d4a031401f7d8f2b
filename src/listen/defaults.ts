// listen's defaults, in a file of their own: the CLI shows them in its flags' help, and a CLI start loads
// this without the listener, the inspector and the sandbox that listenConfig (options.ts) brings.
import { STATE_DIR } from '../folder/index.js';
import { DEFAULT_WAIT_FOR_APP_MS } from '../listener/app-wait.js';
import { LIMITS } from '../contract/index.js';

/** Every default of listen, in one place: the CLI's flags show these, and listenConfig applies them. */
export const LISTEN_DEFAULTS = {
  port: 4300,
  sandboxPort: 4302,
  inspectorPort: 4301,
  host: '127.0.0.1',
  path: '/',
  tolerance: LIMITS.replayWindowSeconds,
  timeoutMs: LIMITS.receiverTimeoutMs,
  waitForAppMs: DEFAULT_WAIT_FOR_APP_MS,
  maxCaptures: 1000,
  maxBufferedBytes: 64 * 1024 * 1024,
  events: ['*'] as readonly string[],
  skipVerify: false,
  keepEndpoint: false,
  inspector: true,
  stateDir: STATE_DIR,
  sandboxWatchMs: 5_000,
} as const;
