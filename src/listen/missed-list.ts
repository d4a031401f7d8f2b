import type { ApiClient, MissedEvent } from '../api/index.js';
import type { WebhookEndpoint } from '../contract/index.js';
import type { Inspector } from '../inspector/index.js';
import type { CaptureStore } from '../store/index.js';
import { catchUp, findMissed } from './catch-up.js';

/** What a session's catch-up works with, known once its endpoint and page are. */
interface Parts {
  client: ApiClient | null;
  endpoint: () => WebhookEndpoint | null;
  /** Whether the endpoint existed before this run: a new one cannot have missed anything. */
  existed: boolean;
  timeScale: number;
  /** When this listen started (ms since the epoch). */
  startedAt: number;
  store: CaptureStore;
  inspector: Inspector | null;
  logger: { info(line: string): void };
}

/** The events a session's endpoint missed while listen was off, for the terminal and the page alike. */
export class MissedList {
  list: MissedEvent[] = [];
  #parts: Parts | null = null;

  attach(parts: Parts): void {
    this.#parts = parts;
  }

  async find(): Promise<MissedEvent[]> {
    const parts = this.#parts;
    const endpoint = parts?.endpoint();
    if (!parts?.existed || !parts.client || !endpoint || endpoint.status === 'deleted') return [];
    const captured = new Set(parts.store.all().flatMap((c) => (c.envelope ? [c.envelope.id] : [])));
    const { client, timeScale, startedAt } = parts;
    this.#show(await findMissed({ client, endpoint, captured, timeScale, startedAt }));
    return this.list;
  }

  async catchUp(confirm: (others: WebhookEndpoint[]) => Promise<boolean>, say: (line: string) => void) {
    const parts = this.#parts;
    const endpoint = parts?.endpoint();
    if (!parts?.client || !endpoint || this.list.length === 0) return { redelivered: [], reenabled: false };
    const result = await catchUp({ client: parts.client, endpoint, missed: this.list, confirm, say });
    if (result.redelivered.length > 0) this.#show([]);
    return result;
  }

  /** The page's Redeliver: without `yes`, it learns first which other endpoints would get the events. */
  async fromPage(yes: boolean): Promise<{ needsConfirm: { id: number; url: string }[] } | { redelivered: string[] }> {
    let others: { id: number; url: string }[] = [];
    const say = (line: string) => this.#parts?.logger.info(line);
    const result = await this.catchUp(async (found) => {
      others = found.map(({ id, url }) => ({ id, url }));
      return yes;
    }, say);
    return !yes && others.length > 0 && result.redelivered.length === 0 ? { needsConfirm: others } : result;
  }

  #show(list: MissedEvent[]): void {
    this.list = list;
    this.#parts?.inspector?.showMissed(list);
  }
}
