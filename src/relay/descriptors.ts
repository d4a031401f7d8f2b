// Each listener and each sender holds one of the process's file descriptors. Past the open-file limit the
// system refuses the connection and the sender sees an empty reply; so the relay counts its connections and,
// with a reserve still free, answers those beyond 503 with Retry-After, saying so in its log.
import { readFile } from 'node:fs/promises';
import type { Server } from 'node:net';
import type { Logger } from '../logger.js';

/** Descriptors kept for what is not a connection: Node's own (~20), Redis, files, a TLS key, and a margin. */
export const RESERVED_DESCRIPTORS = 48;
/** At most one log line a minute about refusals. */
const SAY_EVERY_MS = 60_000;

/** The process's open-file limit (the soft one), where the system tells (Linux: /proc/self/limits); else null. */
export async function openFileLimit(): Promise<number | null> {
  const text = await readFile('/proc/self/limits', 'utf8').catch(() => '');
  const soft = /^Max open files\s+(\d+|unlimited)/m.exec(text)?.[1];
  return soft === undefined || soft === 'unlimited' ? null : Number(soft);
}

/** What the relay says at start when the limit allows fewer connections than --max-channels listeners. */
export function lowLimitWords(limit: number, maxChannels: number): string | null {
  const connections = Math.max(0, limit - RESERVED_DESCRIPTORS);
  if (connections >= maxChannels + 100) return null;
  return `The open-file limit of this process is ${limit} (ulimit -n): the relay takes about ${connections} connections at once, listeners and senders together, fewer than --max-channels ${maxChannels} listeners. Senders beyond get 503 with Retry-After. Raise it before starting the relay: ulimit -n 65536 (in a systemd unit, LimitNOFILE=65536; in Docker, --ulimit nofile=65536).`;
}

/** The connections a server holds, against what its limit leaves for them. */
export class ConnectionGuard {
  #open = 0;
  #saidAt = -Infinity;
  readonly #most: number;

  constructor(
    limit: number | null,
    private readonly logger: Logger,
  ) {
    this.#most = limit === null ? Number.POSITIVE_INFINITY : Math.max(1, limit - RESERVED_DESCRIPTORS);
  }

  /** Counts `server`'s connections; an accept the system refused anyway (EMFILE) is said, not thrown. */
  watch(server: Server): void {
    server.on('connection', (socket) => {
      this.#open += 1;
      socket.once('close', () => (this.#open -= 1));
    });
    server.on('error', (error: NodeJS.ErrnoException) => {
      if (error.syscall === 'accept') this.say(`a connection was refused by the system (${error.code})`);
    });
  }

  /** Whether this connection is one too many: it is answered 503, and closed. */
  get full(): boolean {
    return this.#open > this.#most;
  }

  /** One line in the log about a refusal, once a minute at most. */
  say(what: string): void {
    const now = performance.now();
    if (now - this.#saidAt < SAY_EVERY_MS) return;
    this.#saidAt = now;
    this.logger.warn(
      `relay: ${what}: the process is at its open-file limit (${this.#open} connections open). Raise it (ulimit -n) or add an instance; said once a minute.`,
    );
  }
}
