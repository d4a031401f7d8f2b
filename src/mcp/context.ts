import { access } from 'node:fs/promises';
import { join, relative, resolve } from 'node:path';
import { ApiClient } from '../api/index.js';
import { readCaptureStore, type StoreReading } from '../store/index.js';
import {
  type EndpointRecordOnFile,
  findRunningSandbox,
  folderFiles,
  readEndpointRecords,
  readListenDiscovery,
  STATE_DIR,
} from '../folder/index.js';

/** What every tool works with: the folder the server started in, as the other commands do. */
export interface McpContext {
  /** The folder, where `.clockhook/` is. */
  dir: string;
  /** Whether tools that make the real service do something may run (`--allow-writes`). */
  allowWrites: boolean;
  env: NodeJS.ProcessEnv;
  /** When this session's `trigger` last emitted an event (ms since the epoch): where a wait for it begins. */
  lastTriggerAt?: number;
}

/** The API the tools call: the real one when a key is set, else the sandbox running in this folder. */
export interface ToolApi {
  client: ApiClient;
  /** A key is set: the real API, or whatever the user points the key at. */
  keyed: boolean;
  /** The sandbox's --time-scale (1 for the real API). */
  timeScale: number;
}

/** The files of the folder's `.clockhook` (the folder the assistant started clockhook mcp in). */
const files = (ctx: McpContext) => folderFiles(join(ctx.dir, STATE_DIR));

export const storePath = (ctx: McpContext) => resolve(ctx.dir, ctx.env.CLOCKHOOK_DB || folderFiles().captures);

const exists = (path: string) =>
  access(path).then(
    () => true,
    () => false,
  );

/**
 * The capture store as it is now (read-only: a listen may hold it). A folder with neither a store nor a
 * running listen is not the project's (the client started the server elsewhere): said, not "no captures".
 */
export async function readStore(ctx: McpContext): Promise<StoreReading> {
  const path = storePath(ctx);
  const any = (await exists(path)) || (await exists(`${path}.journal`));
  if (!any && !(await readListenDiscovery(files(ctx).listen)))
    throw new Error(
      `Nothing of clockhook's in ${ctx.dir}: no capture store (${relative(ctx.dir, path)}) and no listen running. Start "npx clockhook listen --forward-to <your app>" in your project's folder, and clockhook mcp there too (its folder is where your assistant starts it: see its MCP settings).`,
    );
  return readCaptureStore(path);
}

/** The captures held here, or none in a folder without a store. */
export async function capturesHere(ctx: McpContext): Promise<StoreReading['captures']> {
  return (await readStore(ctx).catch(() => null))?.captures ?? [];
}

/** The API, or an error that says how to get one. */
export async function apiOf(ctx: McpContext): Promise<ToolApi> {
  const apiKey = ctx.env.CLOCKHOOK_API_KEY;
  if (apiKey) {
    const baseUrl = ctx.env.CLOCKHOOK_API_BASE;
    if (!baseUrl) throw new Error('CLOCKHOOK_API_KEY is set without CLOCKHOOK_API_BASE: set the API base URL too.');
    return { client: new ApiClient({ baseUrl, apiKey }), keyed: true, timeScale: 1 };
  }
  const sandbox = await findRunningSandbox(files(ctx).sandbox);
  if (!sandbox)
    throw new Error(
      `No API here: no sandbox runs in ${ctx.dir} and CLOCKHOOK_API_KEY is not set. Start "npx clockhook listen --forward-to <your app>" in this folder (it runs the sandbox), or set CLOCKHOOK_API_KEY and CLOCKHOOK_API_BASE.`,
    );
  const client = new ApiClient({ baseUrl: sandbox.apiBase, apiKey: sandbox.apiKey });
  return { client, keyed: false, timeScale: sandbox.timeScale ?? 1 };
}

/**
 * The API for a tool that makes the service do something (redeliver, ping, enable): allowed with the
 * sandbox; with a key set, only when the server was started with --allow-writes.
 */
export async function writingApiOf(ctx: McpContext, what: string): Promise<ToolApi> {
  const api = await apiOf(ctx);
  if (api.keyed && !ctx.allowWrites)
    throw new Error(
      `${what} would make the service act, and an API key is set (CLOCKHOOK_API_KEY): not without --allow-writes. Start the server as "npx clockhook mcp --allow-writes" to let it, or unset the key to use the sandbox.`,
    );
  return api;
}

/** The endpoint listen registered in this folder (the one on file, or `id` among several). */
export async function endpointOnFile(ctx: McpContext, id?: number): Promise<EndpointRecordOnFile> {
  const records = await readEndpointRecords(files(ctx).endpoints);
  const record = id === undefined ? (records.length === 1 ? records[0] : undefined) : records.find((r) => r.id === id);
  if (record) return record;
  throw new Error(
    records.length === 0
      ? `No endpoint on file in ${files(ctx).endpoints}: run "npx clockhook listen" in this folder first.`
      : `Several endpoints are on file (${records.map((r) => r.id).join(', ')}): give endpointId.`,
  );
}

/** That a listen runs in this folder on this store (captures can come); else an error that says how to start one. */
export async function listenRunsHere(ctx: McpContext): Promise<void> {
  const listen = await readListenDiscovery(files(ctx).listen);
  if (listen?.db === storePath(ctx)) return;
  throw new Error(
    `No listen runs in ${ctx.dir} on this store, so nothing new can arrive: start "npx clockhook listen --forward-to <your app>" here, then wait again.`,
  );
}

/** The running listen of this folder, for replays; an error that says how to start one. */
export async function listenHere(ctx: McpContext): Promise<{ inspector: string; startedAt?: number }> {
  const listen = await readListenDiscovery(files(ctx).listen);
  if (listen?.inspector && listen.db === storePath(ctx))
    return { inspector: listen.inspector, startedAt: listen.startedAt };
  throw new Error(
    `No listen with its inspector runs in ${ctx.dir} on this store: start "npx clockhook listen --forward-to <your app>" here; replays go through it.`,
  );
}
