import type { Logger } from '../logger.js';
import { findRunningSandbox, type SandboxDiscovery } from '../folder/index.js';

export interface SandboxWatchOptions {
  /** The folder's running sandbox listen uses (`clockhook sandbox` in another terminal), as discovered. */
  sandbox: SandboxDiscovery;
  /** Its discovery file, where a sandbox started again announces itself. */
  discoveryPath: string;
  logger: Logger;
  /** How often its health route is asked. @default 5000 */
  intervalMs?: number;
}

/**
 * Listen can use a sandbox that `clockhook sandbox` runs in another terminal. When that one stops,
 * deliveries stop and the inspector's Redeliver and Ping fail, and the listen terminal used to say
 * nothing. Its health route is asked every `intervalMs`: a stop, and a return, are said once each. One
 * started again at another address cannot be followed (the endpoint and the API client are set up for
 * this one): that is said too, with what to do.
 */
export function watchSandbox(options: SandboxWatchOptions): { close(): void } {
  const { sandbox, discoveryPath, logger } = options;
  const port = new URL(sandbox.apiBase).port;
  let up = true;
  let elsewhere: string | null = null;
  let checking = false;
  const check = async () => {
    if (checking) return;
    checking = true;
    try {
      const alive = await fetch(`${sandbox.apiBase}/sandbox/health`, { signal: AbortSignal.timeout(2_000) }).then(
        (response) => response.ok,
        () => false,
      );
      if (alive !== up) {
        up = alive;
        if (alive) logger.info(`The sandbox at ${sandbox.apiBase} is back: deliveries come again.`);
        else {
          logger.warn(
            `The sandbox at ${sandbox.apiBase} (pid ${sandbox.pid}) has stopped: no deliveries come, and the inspector's Redeliver and Ping fail, until it runs again. Start it again in this folder: npx clockhook sandbox --port ${port}`,
          );
        }
      }
      if (alive) {
        elsewhere = null;
        return;
      }
      const now = await findRunningSandbox(discoveryPath);
      if (now && now.apiBase !== sandbox.apiBase && now.apiBase !== elsewhere) {
        elsewhere = now.apiBase;
        logger.warn(
          `A sandbox runs in this folder again, at ${now.apiBase}, but this listen talks to the one at ${sandbox.apiBase}: restart listen to use the new one.`,
        );
      }
    } finally {
      checking = false;
    }
  };
  const timer = setInterval(() => void check(), options.intervalMs ?? 5_000);
  timer.unref();
  return { close: () => clearInterval(timer) };
}
