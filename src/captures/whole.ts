// The store's leaves, not its index: `clockhook captures` loads this without the running store (a CLI start).
import { type Capture, decodeBody, encodeBody } from '../store/capture.js';
import { type StoreReading, StoreUnreadableError } from '../store/read-only.js';
import { type EventStory, withStory } from '../story/index.js';

/**
 * A capture as `show --json` and the NDJSON export give it: as stored, with its story, and `body` the whole
 * body (`bodyEncoding` utf8 when it is valid UTF-8, else base64), also when the store kept it in a file.
 */
export function wholeCapture(
  capture: Capture,
  body: Buffer,
  stories: ReadonlyMap<string, EventStory>,
  missing?: string,
) {
  const { bodyFile: _kept, ...shown } = withStory(capture, stories);
  return { ...shown, ...encodeBody(body), ...(missing ? { bodyMissing: missing } : {}) };
}

/** A capture with its whole body, or (`missing`, saying why) only the beginning the store kept of it. */
export interface WithBody {
  capture: Capture;
  body: Buffer;
  /** Set when the body's own file is gone (deleted by hand, or never written for a refused delivery). */
  missing?: string;
}

/**
 * A capture with its whole body. A body file that is gone is not an error here: the capture comes with the
 * beginning the store kept and `missing` says so, so that one lost file never stops the others' export.
 */
export async function withBody(reading: StoreReading, capture: Capture): Promise<WithBody> {
  try {
    return { capture, body: await reading.body(capture) };
  } catch (error) {
    if (!(error instanceof StoreUnreadableError)) throw error;
    const missing = `${error.message} Only its first ${capture.body.length} characters were kept in the store; this is them.`;
    return { capture, body: decodeBody(capture), missing };
  }
}
