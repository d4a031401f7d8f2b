// A listen session's API: the real one, the sandbox already running in the folder, or an embedded one.
import { ApiClient } from '../api/index.js';
import { findRunningSandbox, folderFiles } from '../folder/index.js';
import { onPortOrFree } from '../http/index.js';
import { type Sandbox, startSandbox } from '../sandbox/index.js';
import { watchSandbox } from './sandbox-watch.js';
import type { Api, Setup } from './session.js';

/**
 * The real API, the sandbox already running in this folder, or an embedded one; none offline. With
 * it, the API base its endpoints are recorded under in endpoints.json: its own, except for an embedded
 * sandbox, which may find its port taken and run on another one over the same state file. It is the
 * same API, so its records stay under the port asked for; else a relay's endpoint would be created
 * again, with a new secret, whenever port 4302 happened to be busy.
 */
export async function connectApi(setup: Setup): Promise<Api | null> {
  const { config, logger, stateDir, cleanups } = setup;
  const connect = (baseUrl: string, apiKey: string, recordsBase?: string, timeScale = 1) => {
    const client = new ApiClient({ baseUrl, apiKey, logger });
    // As the client spells it: `--api-base https://api.example.com/` one day and without the slash the next is one API.
    return { client, recordsBase: recordsBase ?? client.baseUrl, timeScale };
  };
  if (config.mode === 'api') return connect(config.apiBase as string, config.apiKey as string);
  if (config.mode === 'offline') return null;
  const files = folderFiles(stateDir);
  const running = await findRunningSandbox(files.sandbox);
  if (running) {
    const watch = watchSandbox({
      sandbox: running,
      discoveryPath: files.sandbox,
      logger,
      intervalMs: config.sandboxWatchMs,
    });
    cleanups.push(async () => watch.close());
    if (config.timeScale !== null && config.timeScale !== (running.timeScale ?? 1))
      logger.warn(
        `A sandbox already runs in this folder (${running.apiBase}) with its own time scale (${running.timeScale ?? 1}): --time-scale applies to a sandbox listen starts. Stop that one, or start it with npx clockhook sandbox --time-scale ${config.timeScale}.`,
      );
    return connect(running.apiBase, running.apiKey, undefined, running.timeScale);
  }
  const timeScale = config.timeScale ?? 1;
  const sandbox = await startEmbeddedSandbox(setup, timeScale);
  cleanups.push(() => sandbox.close());
  return connect(sandbox.apiBase, sandbox.apiKey, `http://127.0.0.1:${config.sandboxPort}`, timeScale);
}

/** The sandbox of this session, on `--sandbox-port` or a free one, its files kept by the folder's keeper. */
function startEmbeddedSandbox({ config, stateDir, logger, keeper }: Setup, timeScale: number): Promise<Sandbox> {
  const files = folderFiles(stateDir);
  const options = { host: '127.0.0.1', timeScale, dbPath: files.sandboxState, discoveryPath: files.sandbox };
  return onPortOrFree(
    config.sandboxPort,
    (port) => startSandbox({ ...options, logger, keeper, port }),
    (port) =>
      logger.warn(
        `Port ${port} is taken; the embedded sandbox uses a free port instead (other commands find it through ${files.sandbox}).`,
      ),
  );
}
