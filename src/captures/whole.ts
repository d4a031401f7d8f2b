import { type Capture, encodeBody } from '../store/index.js';
import { type EventStory, withStory } from '../story/index.js';

/**
 * A capture as `show --json` and the NDJSON export give it: as stored, with its story, and `body` the whole
 * body (`bodyEncoding` utf8 when it is valid UTF-8, else base64), also when the store kept it in a file.
 */
export function wholeCapture(capture: Capture, body: Buffer, stories: ReadonlyMap<string, EventStory>) {
  const { bodyFile: _kept, ...shown } = withStory(capture, stories);
  return { ...shown, ...encodeBody(body) };
}
