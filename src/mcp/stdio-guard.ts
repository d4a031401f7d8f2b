// What comes in on stdin, one JSON-RPC message a line, before the SDK's transport reads it. The SDK's reader
// takes at most 10 MB and, past that, closes the server without a word (exit 0, and the client waits on an
// answer that never comes). Here a line that is too long is dropped as it streams, never held whole, and
// answered with an error naming its size, under the request's own id; the lines around it go on as they came.
import { Transform, type TransformCallback } from 'node:stream';

/** The longest request the server takes: the SDK's own limit, so that a client's 10 MB request still fits. */
export const MAX_REQUEST_BYTES = 10 * 1024 * 1024;

/** How much of a dropped line's beginning and end is kept to find its id. */
const EDGE_BYTES = 512;

/** A JSON-RPC id where a client writes it first (`{"jsonrpc":"2.0","id":7,"method":…`). */
const ID_FIRST = /^\{(?:\s*"(?:jsonrpc|method)"\s*:\s*"[^"]*"\s*,)*\s*"id"\s*:\s*(-?\d+|"[^"\\]{0,100}")/;
/** A JSON-RPC id where the SDK's client writes it, last (`…,"jsonrpc":"2.0","id":7}`). */
const ID_LAST = /"id"\s*:\s*(-?\d+|"[^"\\]{0,100}")\s*\}\s*$/;

/** The id of a request too long to read, from its first and last bytes; undefined where neither says it. */
export function idOfDropped(head: string, tail: string): string | number | undefined {
  const found = ID_FIRST.exec(head)?.[1] ?? ID_LAST.exec(tail)?.[1];
  if (found === undefined) return undefined;
  return found.startsWith('"') ? found.slice(1, -1) : Number(found);
}

/** A request dropped for its size: its id when it could be found, and how many bytes it had. */
export interface DroppedRequest {
  id: string | number | undefined;
  bytes: number;
}

/**
 * Passes whole lines of at most `maxBytes` on; a longer one is dropped while it streams (only its edges kept)
 * and told to `onDropped` once its end comes.
 */
export class LineGuard extends Transform {
  /** The current line's chunks while it is within the limit. */
  #chunks: Buffer[] = [];
  #length = 0;
  /** The current line is too long: its first bytes, and its latest. */
  #dropping: { head: Buffer; tail: Buffer } | null = null;

  constructor(
    private readonly maxBytes: number,
    private readonly onDropped: (dropped: DroppedRequest) => void,
  ) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    let from = 0;
    for (let end = chunk.indexOf(10); end !== -1; end = chunk.indexOf(10, from)) {
      this.#take(chunk.subarray(from, end));
      this.#endLine();
      from = end + 1;
    }
    this.#take(chunk.subarray(from));
    done();
  }

  /** Bytes of the current line. */
  #take(part: Buffer): void {
    if (part.length === 0) return;
    this.#length += part.length;
    if (this.#dropping) {
      this.#dropping.tail = Buffer.concat([this.#dropping.tail, part]).subarray(-EDGE_BYTES);
      return;
    }
    this.#chunks.push(part);
    if (this.#length <= this.maxBytes) return;
    const line = Buffer.concat(this.#chunks);
    this.#dropping = { head: Buffer.from(line.subarray(0, EDGE_BYTES)), tail: Buffer.from(line.subarray(-EDGE_BYTES)) };
    this.#chunks = [];
  }

  #endLine(): void {
    if (this.#dropping) {
      const { head, tail } = this.#dropping;
      this.onDropped({ id: idOfDropped(head.toString('utf8'), tail.toString('utf8')), bytes: this.#length });
    } else {
      this.push(Buffer.concat([...this.#chunks, Buffer.from('\n')]));
    }
    this.#chunks = [];
    this.#length = 0;
    this.#dropping = null;
  }
}

/** A size as a person reads it: "12.0 MB". */
export const megabytes = (bytes: number) => `${(bytes / 1_000_000).toFixed(1)} MB`;
