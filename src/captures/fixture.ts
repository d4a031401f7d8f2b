import { signPayload } from '../contract/index.js';
import { withoutHopByHop } from '../http/index.js';
import { type Capture, encodeBody } from '../store/capture.js';

/**
 * A capture as a test fixture (`captures export --format fixture`): what was sent, without the signature
 * header, which is made anew with the secret and the time of each send.
 */
export interface Fixture {
  clockhookFixture: 1;
  method: string;
  path: string;
  headers: Record<string, string | string[]>;
  body: string;
  bodyEncoding: 'utf8' | 'base64';
  envelope: Capture['envelope'];
}

/** A fixture of a capture and its whole body. */
export function fixtureOf(capture: Capture, body: Buffer): Fixture {
  // Left out: the signature (made anew at each send), and what belongs to one connection.
  const {
    'x-service-signature': _signature,
    host: _host,
    'content-length': _length,
    ...headers
  } = withoutHopByHop(capture.headers);
  return {
    clockhookFixture: 1,
    method: capture.method,
    path: capture.path,
    headers,
    ...encodeBody(body),
    envelope: capture.envelope,
  };
}

/** Whether a value read from a file is a fixture; the message says what is wrong when it is not. */
export function fixtureProblem(value: unknown): string | null {
  const f = value as Partial<Fixture> | null;
  if (typeof f !== 'object' || f === null || f.clockhookFixture !== 1)
    return 'it is not a clockhook fixture ("clockhookFixture": 1)';
  if (typeof f.body !== 'string' || (f.bodyEncoding !== 'utf8' && f.bodyEncoding !== 'base64'))
    return 'its body or bodyEncoding is missing';
  return null;
}

/** The request a fixture makes, signed now (`timestamp`, Unix seconds, to send a stale one). */
export function signedFixture(
  fixture: Fixture,
  { secret, timestamp = Math.floor(Date.now() / 1000) }: { secret: string; timestamp?: number },
): { method: string; path: string; headers: Record<string, string | string[]>; body: Buffer } {
  const body = Buffer.from(fixture.body, fixture.bodyEncoding);
  const signature = signPayload({ payload: body, secret, timestamp });
  return {
    method: fixture.method,
    path: fixture.path,
    headers: { ...fixture.headers, 'x-service-signature': signature },
    body,
  };
}
