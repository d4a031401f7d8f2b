// A listen session as its parts see it: what it tells its caller once ready (ReadyInfo, ListenSession), the
// relay's events, and what the set-up steps share (Setup).
import type { ApiClient, MissedEvent } from '../api/index.js';
import type { WebhookEndpoint } from '../contract/index.js';
import type { FolderKeeper } from '../folder/index.js';
import type { Inspector } from '../inspector/index.js';
import type { AppStateEvent, DeliveryReport, Listener } from '../listener/index.js';
import type { Logger } from '../logger.js';
import type { CaptureStore } from '../store/index.js';
import type { TracingConfig } from '../tracing/config.js';
import type { ListenConfig, ListenMode } from './options.js';

export type { ListenMode, RelayEvent } from './options.js';

export interface ReadyInfo {
  event: 'ready';
  listener: string;
  inspector: string | null;
  forwardTo: string | null;
  /** With routes by event type: each as `TYPES=TARGET` (or the target, for one that takes every type). */
  routes?: string[];
  apiBase: string | null;
  sandbox: boolean;
  endpointId: number | null;
  publicUrl: string | null;
  /** With --faults: the faults as given, and the seed that repeats them. */
  faults?: { spec: string; seed: number };
  /** With tracing on: where spans go, and under what service name. */
  tracing?: TracingConfig;
}

export interface ListenSession {
  ready: ReadyInfo;
  mode: ListenMode;
  /** The secret in use, for `--print-secret` and the masked display; never sent to the page. */
  secret: string | null;
  /**
   * The command that prints `secret` while this run goes on (`npx clockhook secret`, with the endpoint's id
   * when several are on file); null when the secret is not on file (given with --secret, or none).
   */
  secretCommand: string | null;
  /** Whether the endpoint this run registered stays, with its secret, for the next run (see keepsEndpoint). */
  endpointKept: boolean;
  /** Whether the endpoint existed before this run (reused, moved, or --endpoint): deliveries may have been missed. */
  endpointExisted: boolean;
  /** What the contract's retry delays are multiplied by at this API (a sandbox's --time-scale), else 1. */
  timeScale: number;
  /** The endpoint deliveries come to, as last read (see EndpointWatch); null offline. */
  readonly endpoint: WebhookEndpoint | null;
  listener: Listener;
  store: CaptureStore;
  inspector: Inspector | null;
  /** The API client (sandbox or service), null when offline. */
  client: ApiClient | null;
  /**
   * Reads the events that came while listen was off and did not reach the endpoint (none for an endpoint
   * new to this run), and shows them on the page until they are redelivered.
   */
  findMissed(): Promise<MissedEvent[]>;
  /**
   * Redelivers the missed events through the API (re-enabling a disabled endpoint first); `confirm` is
   * asked when other endpoints would get them too. The page's list goes once they are redelivered.
   */
  catchUp(
    confirm: (others: WebhookEndpoint[], reach: string) => Promise<boolean>,
    say: (line: string) => void,
  ): Promise<{ redelivered: string[]; reenabled: boolean }>;
  /** Finishes in-flight forwards, flushes the store, deletes the endpoint it created unless kept. Safe to call twice. */
  close(): Promise<void>;
}

/** What the set-up steps share; each step registers how to undo itself in `cleanups`. */
export interface Setup {
  /** The whole configuration (listenConfig): every default in place, checked. */
  config: ListenConfig;
  logger: Logger;
  stateDir: string;
  cleanups: (() => Promise<void>)[];
  /** The keeper of the state folder: each part of the session registers the files it keeps there with it. */
  keeper: FolderKeeper;
  /** Told of every delivery the listener answered, after the caller's `onDelivery`. */
  onDelivery: (report: DeliveryReport) => void;
  /** Who is told when the app stops answering or is back: the caller's `onAppState`, then the page once it runs. */
  appState: Set<(event: AppStateEvent) => void>;
}

/** A client of the API, and the base its endpoints are recorded under in endpoints.json (see connectApi). */
export interface Api {
  client: ApiClient;
  recordsBase: string;
  /** What the contract's retry delays are multiplied by: the folder's sandbox's --time-scale, else 1. */
  timeScale: number;
}
