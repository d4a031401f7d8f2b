import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { isApiVersionLabel, API_VERSION, LIMITS } from '../contract/index.js';
import { type Logger, silentLogger } from '../logger.js';
import { coalesceWrites } from '../store/index.js';
import { SandboxApi } from './api.js';
import { keepSandboxFiles } from './keep-files.js';
import { DEFAULT_ACCOUNT, openSandboxState } from './state.js';
import { ensureDefaultAccount } from './requests.js';
import { type AttemptReport, DeliveryWorker, realTimer, type SetTimer } from './worker.js';
import { closeNow, listenOn } from '../http/index.js';
import { explained, OptionError } from '../errors.js';
import {
  claimStateFile,
  DEFAULT_DISCOVERY_PATH,
  folderFiles,
  type FolderKeeper,
  readDiscoveryFile,
  removeDiscovery,
  writeDiscovery,
} from '../folder/index.js';

export interface SandboxOptions {
  /** @default 4302 */
  port?: number;
  /** @default '127.0.0.1' */
  host?: string;
  /** lowdb state file; null keeps the state in memory only (a test's sandbox). @default '.clockhook/sandbox-db.json' */
  dbPath?: string | null;
  /** Discovery file for other commands; null writes none. @default '.clockhook/sandbox.json' */
  discoveryPath?: string | null;
  /** Multiplies retry delays: 0.001 turns 1 min into 60 ms. The 30 s time-out is not scaled. @default 1 */
  timeScale?: number;
  /** api_version of the envelopes this sandbox sends. @default API_VERSION (contract/limits.ts) */
  apiVersion?: string;
  /** The receiver's time limit per attempt. @default LIMITS.receiverTimeoutMs (the contract's) */
  deliveryTimeoutMs?: number;
  /** Only the newest this many events are kept (with their attempts); pending ones always. @default 5000 */
  maxEvents?: number;
  /** @default Date.now */
  now?: () => number;
  /** The timers of retries and of the receiver's time limit (a test's clock). @default the real clock's */
  setTimer?: SetTimer;
  /** @default silent */
  logger?: Logger;
  /** Told about every completed delivery attempt. */
  onAttempt?: (report: AttemptReport) => void;
  /** The keeper of its folder, which writes its files back should they be deleted (listen's). @default one of its own */
  keeper?: FolderKeeper;
}

export interface Sandbox {
  /** `http://host:port` of the REST API. */
  apiBase: string;
  /** The default account's full-scope key. */
  apiKey: string;
  account: string;
  port: number;
  /** Stops the server and the worker, writes the state, removes the discovery file. Safe to call twice. */
  close(): Promise<void>;
}

const DEFAULTS = {
  port: 4302,
  host: '127.0.0.1',
  dbPath: folderFiles().sandboxState as string | null,
  discoveryPath: DEFAULT_DISCOVERY_PATH as string | null,
  timeScale: 1,
  apiVersion: API_VERSION as string,
  deliveryTimeoutMs: LIMITS.receiverTimeoutMs as number,
  maxEvents: 5000,
  now: Date.now,
  setTimer: realTimer,
  logger: silentLogger,
  onAttempt: (_report: AttemptReport) => {},
  keeper: undefined as FolderKeeper | undefined,
};

function validateOptions(options: typeof DEFAULTS): void {
  if (!Number.isFinite(options.timeScale) || options.timeScale <= 0) {
    throw new OptionError(
      `timeScale must be a positive number (got ${options.timeScale}); 0.001 turns 1 minute into 60 ms.`,
    );
  }
  if (!isApiVersionLabel(options.apiVersion)) {
    throw new OptionError(`apiVersion must be a date label YYYY-MM-DD (got ${JSON.stringify(options.apiVersion)}).`);
  }
  if (!Number.isInteger(options.maxEvents) || options.maxEvents < 1)
    throw new OptionError(`maxEvents must be a positive integer (got ${options.maxEvents}).`);
}

/**
 * Starts the sandbox: a faithful local emulator of the service's webhook API and delivery worker,
 * with its state in a lowdb file. Resolves once it is listening and its discovery file is written.
 */
export async function startSandbox(options: SandboxOptions = {}): Promise<Sandbox> {
  const config = {
    ...DEFAULTS,
    ...Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined)),
  } as typeof DEFAULTS;
  validateOptions(config);
  // Two sandboxes over one state file would each write the whole of theirs, and the last to write
  // would undo the other's endpoints, secrets and events: the second is refused, as a second listen is.
  const release =
    config.dbPath === null
      ? async () => {}
      : await claimStateFile(config.dbPath, 'sandbox-db.json', (pid) => sandboxInUse(config, pid));
  try {
    return await runSandbox(config, release);
  } catch (error) {
    await release();
    throw error;
  }
}

async function sandboxInUse(config: typeof DEFAULTS, pid: number): Promise<string> {
  const running = config.discoveryPath ? await readDiscoveryFile(config.discoveryPath) : null;
  if (running?.pid === pid) {
    return `${config.dbPath} is in use by the sandbox running at ${running.apiBase} (pid ${pid}), which the other commands in this folder use. Stop that one first, or give this one its own state with --db.`;
  }
  return `${config.dbPath} is in use by another sandbox (pid ${pid}: a clockhook sandbox, or the one clockhook listen runs when none is running). Stop that one first, or give this one its own state with --db. (If none runs, pid ${pid} is another program's now: delete ${config.dbPath}.lock.)`;
}

/** The sandbox's REST API on its port: the server, the port it got and its base URL. */
async function serveApi(sandboxApi: SandboxApi, config: typeof DEFAULTS) {
  const server: Server = createServer((req, res) => {
    sandboxApi.handle(req, res).catch((error) => {
      config.logger.error(`sandbox: ${explained(error)}`);
      res.destroy();
    });
  });
  await listenOn(server, config.port, config.host);
  const { port } = server.address() as AddressInfo;
  const apiBase = `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`;
  return { server, port, apiBase };
}

async function runSandbox(config: typeof DEFAULTS, release: () => Promise<void>): Promise<Sandbox> {
  const { now, logger } = config;
  const db = await openSandboxState(config.dbPath, logger);
  const defaultKey = ensureDefaultAccount(db.data, now());
  const persist = coalesceWrites(() => db.write());
  await persist();

  const worker = new DeliveryWorker({
    db,
    persist,
    timeScale: config.timeScale,
    timeoutMs: config.deliveryTimeoutMs,
    now,
    setTimer: config.setTimer,
    onAttempt: config.onAttempt,
  });
  const { server, port, apiBase } = await serveApi(new SandboxApi({ db, config, worker, persist }), config);
  const discovery = { apiBase, apiKey: defaultKey.key, account: DEFAULT_ACCOUNT, pid: process.pid };
  const writeOwnDiscovery = async () => {
    if (config.discoveryPath) await writeDiscovery(config.discoveryPath, { ...discovery, timeScale: config.timeScale });
  };
  await writeOwnDiscovery();
  const files = keepSandboxFiles(
    { ...config, logger, persist, writeDiscovery: writeOwnDiscovery, inUse: (pid) => sandboxInUse(config, pid) },
    release,
  );
  // Last, with nothing awaited after it: an attempt due already is reported only once the caller has
  // said the sandbox is ready (the ready line comes first).
  worker.resume();

  let closing: Promise<void> | undefined;
  return {
    apiBase,
    apiKey: defaultKey.key,
    account: DEFAULT_ACCOUNT,
    port,
    close() {
      closing ??= (async () => {
        await files.stop();
        await closeNow(server);
        await worker.close();
        await persist();
        if (config.discoveryPath) await removeDiscovery(config.discoveryPath);
        await files.release();
      })();
      return closing;
    },
  };
}
