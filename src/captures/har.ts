import type { WithBody } from './whole.js';
import type { Capture } from '../store/index.js';
import { type EventStory, outcomeOf, withStory } from '../story/index.js';

/** A HAR 1.2 name/value list from a header record (a repeated header is one entry per value). */
function harHeaders(headers: Record<string, string | string[]>): { name: string; value: string }[] {
  return Object.entries(headers).flatMap(([name, value]) =>
    (Array.isArray(value) ? value : [value]).map((one) => ({ name, value: String(one) })),
  );
}

const mimeOf = (headers: Record<string, string | string[]>) => String(headers['content-type'] ?? '');

/** Text as HAR holds it: UTF-8 as it is, other bytes in base64 with `encoding`. */
function harText(bytes: Buffer | string, encoding: 'utf8' | 'base64') {
  const text = typeof bytes === 'string' ? bytes : bytes.toString(encoding);
  return encoding === 'base64' ? { text, encoding: 'base64' } : { text };
}

/** The request as it reached the listener: its URL is the Host it was sent to, with its path. */
function harRequest(capture: Capture, body: Buffer) {
  const url = new URL(capture.path, `http://${String(capture.headers.host ?? 'localhost')}`);
  const encoding = capture.bodyEncoding;
  return {
    method: capture.method,
    url: url.href,
    httpVersion: 'HTTP/1.1',
    cookies: [],
    headers: harHeaders(capture.headers),
    queryString: [...url.searchParams].map(([name, value]) => ({ name, value })),
    postData: { mimeType: mimeOf(capture.headers), ...harText(body, encoding) },
    headersSize: -1,
    bodySize: body.length,
  };
}

/** The answer the sender got: the app's as stored (its first 16 KiB), or clockhook's own. */
function harResponse(capture: Capture) {
  const forward = capture.forward;
  const status = capture.rejected?.statusCode ?? (forward === null ? 200 : (forward?.statusCode ?? 0));
  const headers = forward ? forward.headers : {};
  const content = forward
    ? {
        size: forward.bodySize ?? forward.body.length,
        mimeType: mimeOf(headers),
        ...harText(forward.body, forward.bodyEncoding),
      }
    : { size: 0, mimeType: '', text: '' };
  return {
    status,
    statusText: '',
    httpVersion: 'HTTP/1.1',
    cookies: [],
    headers: harHeaders(headers),
    content,
    redirectURL: typeof headers.location === 'string' ? headers.location : '',
    headersSize: -1,
    bodySize: forward?.bodySize ?? -1,
  };
}

/** One HAR entry; clockhook's own facts in `_clockhook`, as HAR allows for fields of a tool. */
function harEntry({ capture: stored, body, missing }: WithBody, stories: ReadonlyMap<string, EventStory>) {
  const capture = withStory(stored, stories);
  const wait = capture.forward?.durationMs ?? 0;
  return {
    startedDateTime: capture.receivedAt,
    time: wait,
    request: harRequest(capture, body),
    response: harResponse(capture),
    cache: {},
    timings: { send: 0, wait, receive: 0 },
    _clockhook: {
      captureId: capture.id,
      source: capture.source,
      replayOf: capture.replayOf ?? null,
      outcome: outcomeOf(capture),
      signature: capture.signature,
      envelope: capture.envelope,
      story: capture.story,
      duplicateOf: capture.duplicateOf,
      rejected: capture.rejected,
      forwardedTo: capture.forward?.target ?? null,
      forwardError: capture.forward?.error ?? null,
      traceId: capture.trace?.traceId ?? null,
      ...(missing ? { bodyMissing: missing } : {}),
    },
    ...(missing ? { comment: `body missing: ${missing}` } : {}),
  };
}

/**
 * A HAR 1.2 log of captures, each with its whole body: it opens in a browser's network panel. `stories`:
 * those of the store the captures come from (see storiesOf), so that each says what it was.
 */
export function harOf(captures: WithBody[], version: string, stories: ReadonlyMap<string, EventStory>) {
  return {
    log: {
      version: '1.2',
      creator: { name: 'clockhook', version },
      entries: captures.map((one) => harEntry(one, stories)),
    },
  };
}
