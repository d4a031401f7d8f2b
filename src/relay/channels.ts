import type { WebSocket } from 'ws';
import { ByteBudget } from '../http/index.js';
import { CHANNEL_PATTERN, type ControlFrame, decodeFrame, parseResponseFrame, type ResponseFrame } from './protocol.js';

export interface Pending {
  resolve(frame: ResponseFrame | null): void;
}

/**
 * The requests in flight on a channel, by id: a fixed array of slots, each id naming its slot
 * (id modulo the size), so a frame finds its request without a hash table. Not a Map: as with the
 * listener's forwards (see PENDING in ../listener/forward.ts), a table of requests made V8 promote
 * every request's objects, which took half of the relay's GC time.
 */
class InFlight<T> {
  readonly #slots: ({ id: number; value: T } | undefined)[];
  /** Free slot numbers (numbers only: nothing here points to a request). */
  readonly #free: number[];
  #round = 0;

  constructor(size: number) {
    this.#slots = Array.from({ length: size }, () => undefined);
    this.#free = Array.from({ length: size }, (_, i) => size - 1 - i);
  }

  /** The new request's id, or undefined when every slot is taken. */
  add(value: T): number | undefined {
    const slot = this.#free.pop();
    if (slot === undefined) return undefined;
    const id = this.#round++ * this.#slots.length + slot;
    this.#slots[slot] = { id, value };
    return id;
  }

  get(id: number): T | undefined {
    const entry = this.#slots[id % this.#slots.length];
    return entry?.id === id ? entry.value : undefined;
  }

  delete(id: number): void {
    const slot = id % this.#slots.length;
    if (this.#slots[slot]?.id !== id) return;
    this.#slots[slot] = undefined;
    this.#free.push(slot);
  }

  values(): T[] {
    return this.#slots.flatMap((entry) => (entry ? [entry.value] : []));
  }
}

export interface Channel {
  id: string;
  socket: WebSocket | null;
  /** The listener reads binary (version 2) requests; see ./protocol.ts. */
  binary: boolean;
  /** This channel's share of the relay's budget of request bodies (a quarter of it). */
  budget: ByteBudget;
  pending: InFlight<Pending>;
  alive: boolean;
}

/**
 * The relay's channels, by id: which listener holds each, its requests in flight and its heartbeat.
 * A channel stays when its listener goes (senders then get 503, not 404) until room is needed.
 */
export class Channels {
  readonly #channels = new Map<string, Channel>();
  readonly #limits: { maxChannels: number; maxInFlight: number; maxBufferedPerChannel: number };

  constructor(limits: { maxChannels: number; maxInFlight: number; maxBufferedPerChannel: number }) {
    this.#limits = limits;
  }

  get(id: string): Channel | undefined {
    return CHANNEL_PATTERN.test(id) ? this.#channels.get(id) : undefined;
  }

  /** Channels with a listener connected. */
  get connected(): number {
    let count = 0;
    for (const channel of this.#channels.values()) if (channel.socket) count += 1;
    return count;
  }

  /**
   * Whether a listener may connect to channel `id`: a known channel always may; a new one when there is
   * room, made from channels whose listener is gone, oldest first.
   */
  makeRoomFor(id: string): boolean {
    if (this.#channels.has(id) || this.#channels.size < this.#limits.maxChannels) return true;
    const idle = [...this.#channels.values()].find((c) => !c.socket);
    if (!idle) return false;
    this.#channels.delete(idle.id);
    return true;
  }

  /** Gives channel `id` to the listener on `socket`; one that held it before is told, and let go. */
  attach(socket: WebSocket, id: string, binary: boolean, publicUrl: string): void {
    let channel = this.#channels.get(id);
    if (!channel) {
      const { maxBufferedPerChannel, maxInFlight } = this.#limits;
      channel = {
        id,
        socket: null,
        binary,
        budget: new ByteBudget(maxBufferedPerChannel),
        pending: new InFlight(maxInFlight),
        alive: true,
      };
      this.#channels.set(id, channel);
    }
    const previous = channel.socket;
    if (previous) {
      // The newest holder of the token wins; the old one is told why it is let go.
      previous.send(
        JSON.stringify({
          type: 'replaced',
          message: 'Another clockhook listen connected with this channel token.',
        } satisfies ControlFrame),
      );
      previous.close(4001, 'replaced');
    }
    const current = channel;
    current.socket = socket;
    current.binary = binary;
    current.alive = true;
    socket.send(
      JSON.stringify({ type: 'ready', channel: id, publicUrl: `${publicUrl}/c/${id}` } satisfies ControlFrame),
    );
    socket.on('pong', () => {
      current.alive = true;
    });
    socket.on('message', (data, isBinary) => {
      const frame = parseResponseFrame(decodeFrame(data, isBinary));
      if (!frame) {
        // A bad frame closes this client only; every other channel goes on.
        socket.close(1008, 'bad frame');
        return;
      }
      current.pending.get(frame.id)?.resolve(frame);
    });
    socket.on('close', () => {
      if (current.socket !== socket) return;
      current.socket = null;
      for (const pending of current.pending.values()) pending.resolve(null);
    });
    socket.on('error', () => socket.terminate());
  }

  /** One heartbeat: a listener that did not answer the last ping is dropped; the others are pinged. */
  beat(): void {
    for (const channel of this.#channels.values()) {
      if (!channel.socket) continue;
      if (!channel.alive) {
        channel.socket.terminate();
        continue;
      }
      channel.alive = false;
      channel.socket.ping();
    }
  }

  closeAll(): void {
    for (const channel of this.#channels.values()) channel.socket?.terminate();
  }
}
