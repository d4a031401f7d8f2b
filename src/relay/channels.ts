import type { WebSocket } from 'ws';
import { ByteBudget } from '../http/index.js';
import { CHANNEL_PATTERN, type ControlFrame, decodeFrame, parseResponseFrame, type ResponseFrame } from './protocol.js';

export interface Pending {
  resolve(frame: ResponseFrame | null): void;
}

/**
 * The requests in flight on a channel, by id: an array of slots, each id naming its slot (id modulo the
 * most there can be), so a frame finds its request without a hash table. Not a Map: as with the listener's
 * forwards (see PENDING in ../listener/forward.ts), a table of requests made V8 promote every request's
 * objects, which took half of the relay's GC time. The slots grow as requests come, up to the most: a
 * channel whose listener is idle holds none (a table of 256 made half of a channel's memory).
 */
class InFlight<T> {
  readonly #slots: ({ id: number; value: T } | undefined)[] = [];
  /** Free slot numbers (numbers only: nothing here points to a request). */
  readonly #free: number[] = [];
  #round = 0;

  constructor(private readonly size: number) {}

  /** The new request's id, or undefined when every slot is taken. */
  add(value: T): number | undefined {
    let slot = this.#free.pop();
    if (slot === undefined) {
      if (this.#slots.length >= this.size) return undefined;
      slot = this.#slots.length;
      this.#slots.push(undefined);
    }
    const id = this.#round++ * this.size + slot;
    this.#slots[slot] = { id, value };
    return id;
  }

  get(id: number): T | undefined {
    const entry = this.#slots[id % this.size];
    return entry?.id === id ? entry.value : undefined;
  }

  delete(id: number): void {
    const slot = id % this.size;
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
  /** The access key its listener presented (its id), null on a relay without keys. */
  keyId: string | null;
}

export interface ChannelLimits {
  maxChannels: number;
  maxInFlight: number;
  maxBufferedPerChannel: number;
  /** Requests in flight on all the channels of one access key, on this instance. */
  maxInFlightPerKey: number;
}

/**
 * The relay's channels, by id: which listener holds each, its requests in flight and its heartbeat.
 * A channel stays when its listener goes (senders then get 503, not 404) until room is needed.
 */
export class Channels {
  readonly #channels = new Map<string, Channel>();
  readonly #limits: ChannelLimits;
  readonly #keyInFlight = new Map<string, number>();
  /** Where the heartbeat is in its round of the channels, and how many it owes (see beat). */
  #beatTurn: Iterator<Channel> | null = null;
  #beatDue = 0;
  /** Told when a channel's listener left (on Redis, the channel's claim is let go). */
  readonly #onLeft: (channel: Channel) => void;

  constructor(limits: ChannelLimits, onLeft: (channel: Channel) => void = () => {}) {
    this.#limits = limits;
    this.#onLeft = onLeft;
  }

  /** The channels with a listener here, for renewing their claims. */
  held(): { channel: string; keyId: string | null }[] {
    return [...this.#channels.values()].flatMap((c) => (c.socket ? [{ channel: c.id, keyId: c.keyId }] : []));
  }

  /** Channels with a listener here that presented key `keyId`. */
  heldBy(keyId: string): number {
    return this.held().filter((held) => held.keyId === keyId).length;
  }

  /** Counts a request of key `keyId` in flight; false when the key has its most already. */
  startRequest(keyId: string | null): boolean {
    const key = keyId ?? '';
    const count = this.#keyInFlight.get(key) ?? 0;
    if (keyId !== null && count >= this.#limits.maxInFlightPerKey) return false;
    this.#keyInFlight.set(key, count + 1);
    return true;
  }

  endRequest(keyId: string | null): void {
    const key = keyId ?? '';
    const count = (this.#keyInFlight.get(key) ?? 1) - 1;
    if (count > 0) this.#keyInFlight.set(key, count);
    else this.#keyInFlight.delete(key);
  }

  /** Lets the listener of channel `id` go, telling it why (`frame`), e.g. taken over on another instance. */
  letGo(id: string, frame: ControlFrame, code: number): void {
    const channel = this.#channels.get(id);
    const socket = channel?.socket;
    if (!channel || !socket) return;
    // At once, not when its close handshake ends: a request that comes meanwhile goes to the new holder,
    // and those in flight on this listener are answered (503, or relayed again by the instance they entered).
    channel.socket = null;
    for (const pending of channel.pending.values()) pending.resolve(null);
    this.#onLeft(channel);
    socket.send(JSON.stringify(frame));
    socket.close(code, frame.type);
  }

  /** Lets go every listener whose key is no longer valid. */
  letGoUnless(valid: (keyId: string) => boolean, message: string): void {
    for (const channel of this.#channels.values()) {
      if (channel.keyId !== null && !valid(channel.keyId)) this.letGo(channel.id, { type: 'refused', message }, 4003);
    }
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
  attach(socket: WebSocket, id: string, binary: boolean, publicUrl: string, keyId: string | null = null): void {
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
        keyId,
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
      // Its requests in flight get their answer now (503), not the time-out: the new listener never saw them.
      for (const pending of channel.pending.values()) pending.resolve(null);
    }
    const current = channel;
    current.socket = socket;
    current.binary = binary;
    current.alive = true;
    current.keyId = keyId;
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
      this.#onLeft(current);
    });
    socket.on('error', () => socket.terminate());
  }

  /**
   * One tick of the heartbeat: `share` of the channels (the tick's part of the period), each on its turn. A
   * listener that did not answer its last ping, a period ago, is dropped; the others are pinged. Every channel
   * is visited once a period, a few at a time: pinging 10,000 in one tick held the loop for ~300 ms.
   */
  beat(share: number): void {
    this.#beatDue += this.#channels.size * share;
    while (this.#beatDue >= 1) {
      this.#beatDue -= 1;
      let next = this.#beatTurn?.next();
      if (!next || next.done) {
        this.#beatTurn = this.#channels.values();
        next = this.#beatTurn.next();
        if (next.done) {
          this.#beatDue = 0;
          return;
        }
      }
      const channel = next.value;
      if (!channel.socket) continue;
      if (!channel.alive) channel.socket.terminate();
      else {
        channel.alive = false;
        channel.socket.ping();
      }
    }
  }

  closeAll(): void {
    for (const channel of this.#channels.values()) channel.socket?.terminate();
  }
}
