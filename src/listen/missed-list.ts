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

  /** From now on, an event of the list leaves it as soon as any capture of it arrives (`arrived`). */
  attach(parts: Parts): void {
    this.#parts = parts;
    parts.store.subscribe((capture) => this.arrived(capture.envelope?.id));
  }

  /** An event arrived: off the list, on the page and in the terminal, with how many are left. */
  arrived(eventId: string | undefined): void {
    if (!eventId || !this.list.some((m) => m.eventId === eventId)) return;
    this.#show(this.list.filter((m) => m.eventId !== eventId));
    const left = this.list.length;
    this.#parts?.logger.info(
      `${eventId} (missed while listen was off) has arrived; ${left === 0 ? 'every missed event is here now' : `${left} missed still to come`}.`,
    );
  }

  async find(): Promise<MissedEvent[]> {
    const parts = this.#parts;
    const endpoint = parts?.endpoint();
    if (!parts?.existed || !parts.client || !endpoint || endpoint.status === 'deleted') return [];
    const captured = new Set(parts.store.all().flatMap((c) => (c.envelope ? [c.envelope.id] : [])));
    const { client, timeScale, startedAt } = parts;
    const found = await findMissed({ client, endpoint, captured, timeScale, startedAt });
    // One may have arrived while the service was asked.
    this.#show(found.filter((m) => parts.store.ofEvent(m.eventId).length === 0));
    return this.list;
  }

  async catchUp(confirm: (others: WebhookEndpoint[], reach: string) => Promise<boolean>, say: (line: string) => void) {
    const parts = this.#parts;
    const endpoint = parts?.endpoint();
    if (!parts?.client || !endpoint || this.list.length === 0) return { redelivered: [], reenabled: false };
    const result = await catchUp({ client: parts.client, endpoint, missed: this.list, confirm, say });
    if (result.redelivered.length > 0) this.#show([]);
    return result;
  }

  /** The page's Redeliver: without `yes`, it learns first which other endpoints would get the events. */
  async fromPage(
    yes: boolean,
  ): Promise<{ needsConfirm: { id: number; url: string }[]; reach: string } | { redelivered: string[] }> {
    let others: { id: number; url: string }[] = [];
    let reach = '';
    const say = (line: string) => this.#parts?.logger.info(line);
    const result = await this.catchUp(async (found, words) => {
      others = found.map(({ id, url }) => ({ id, url }));
      reach = words;
      return yes;
    }, say);
    return !yes && others.length > 0 && result.redelivered.length === 0 ? { needsConfirm: others, reach } : result;
  }

  #show(list: MissedEvent[]): void {
    this.list = list;
    this.#parts?.inspector?.showMissed(list);
  }
}
