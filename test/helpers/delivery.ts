// One way for a test to make a delivery, on the library users get (clockhook/testing): an envelope as the
// service sends one, signed as the service signs it. Tests that give listen or a listener a secret of their
// own use SECRET.
import type { DeliveryEnvelope } from '../../src/contract/index.js';
import { signDelivery } from '../../src/testing/index.js';

/** The secret of tests that give listen (`--secret`) or a listener (`secret`) one of their own. */
export const SECRET = 'whsec_test_0123456789abcdef';

/**
 * An envelope's JSON as the service sends it: a `punch.created` of event `id`, with empty data unless `fields`
 * (any of the envelope's, `data` among them) say otherwise.
 */
export function envelopeBody(id: string, fields: Partial<Record<keyof DeliveryEnvelope, unknown>> = {}): string {
  return JSON.stringify({
    id,
    object: 'event',
    type: 'punch.created',
    api_version: '2026-11-01',
    created: 1_790_000_000,
    data: {},
    ...fields,
  });
}

/** The headers the service sends with `body`, signed with `secret` now, or at `timestamp` (Unix seconds). */
export function signedHeaders(
  body: string | Buffer,
  { secret = SECRET, timestamp }: { secret?: string; timestamp?: number } = {},
): Record<string, string> {
  return signDelivery({ body, secret, timestamp }).headers;
}
