// Drift: a delivery whose data is shaped otherwise than the earlier deliveries of its type had it (a field
// gone, a new one, a value of another kind), which a pinned api_version hides until production. Told on the
// capture (`drift`, marked on the page) and said once per change in listen's log.
import { addToShape, emptyShape, type Shape } from '../contract/index.js';
import type { Capture } from '../store/index.js';

/**
 * The `data` of a delivery the service sent (not a replay, not one clockhook refused), from its body's text;
 * undefined when it has none to learn a shape from (not JSON, no `data`). Listen's drift and `clockhook types`
 * learn a type's shape from the same deliveries.
 */
export function deliveryData(capture: Capture, text: string): { data: unknown } | undefined {
  if (capture.source !== 'delivery' || capture.rejected) return undefined;
  return envelopeData(text);
}

/** The `data` of an envelope given as text (a capture's body, a scenario's delivery); undefined when it has none. */
export function envelopeData(text: string): { data: unknown } | undefined {
  try {
    const value = JSON.parse(text) as unknown;
    return typeof value === 'object' && value !== null && 'data' in value ? { data: value.data } : undefined;
  } catch {
    return undefined; // not JSON: nothing to learn
  }
}

/** Changes a capture carries at most (a payload of another kind altogether would list every field). */
const MOST_CHANGES = 10;

/** The shapes of each event type's data, from the deliveries held and each new one. */
export class ShapeBook {
  readonly #shapes = new Map<string, Shape>();
  readonly #said = new Set<string>();

  constructor(
    /** The captures held now: a type is learnt from them when its first new delivery comes. */
    private readonly held: () => Iterable<Capture>,
    private readonly say: (line: string) => void,
  ) {}

  /** How a new delivery's data differs from its type's earlier ones; each change said once. */
  drift(type: string, data: unknown, captureId: string): string[] {
    try {
      return this.#drift(type, data, captureId);
    } catch (error) {
      // Advice only: a delivery is captured and forwarded whatever happens here.
      this.say(`Could not compare the shape of ${captureId} with earlier ${type} deliveries: ${String(error)}`);
      return [];
    }
  }

  #drift(type: string, data: unknown, captureId: string): string[] {
    let shape = this.#shapes.get(type);
    if (!shape) {
      shape = this.#learnt(type);
      this.#shapes.set(type, shape);
    }
    const changes = addToShape(shape, data, 'data').slice(0, MOST_CHANGES);
    const news = changes.filter((change) => !this.#said.has(`${type} ${change}`));
    for (const change of news) this.#said.add(`${type} ${change}`);
    if (news.length > 0)
      this.say(
        `${type} came shaped otherwise than before (${captureId}): ${news.join('; ')}. A handler typed from the earlier ones may miss it: npx clockhook types writes the types from what arrived.`,
      );
    return changes;
  }

  /** A type's shape from the deliveries of it held (their text in the store; a body kept in a file is left out). */
  #learnt(type: string): Shape {
    const shape = emptyShape();
    for (const capture of this.held()) {
      if (capture.envelope?.type !== type || capture.bodyFile || capture.bodyEncoding !== 'utf8') continue;
      const delivered = deliveryData(capture, capture.body);
      if (delivered) addToShape(shape, delivered.data, 'data');
    }
    return shape;
  }
}
