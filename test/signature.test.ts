import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { signPayload, verifySignature } from '../src/index.js';

const SECRET = 'whsec_test_5b1f0c2d9e';
const BODY = '{"id":"evt_1","object":"event","type":"punch.created","data":{"name":"Zoë"}}';
const T = 1_790_000_000;
const at = (seconds: number) => () => seconds * 1000;

function digest(t: number | string, body: string | Buffer, secret = SECRET): string {
  return createHmac('sha256', secret).update(`${t}.`).update(body).digest('hex');
}

describe('signPayload', () => {
  it('produces t=<unix>,v1=<hex HMAC of "<t>.<body>">', () => {
    expect(signPayload({ payload: BODY, secret: SECRET, timestamp: T })).toBe(`t=${T},v1=${digest(T, BODY)}`);
  });

  it('uses the current time when no timestamp is given', () => {
    const before = Math.floor(Date.now() / 1000);
    const header = signPayload({ payload: BODY, secret: SECRET });
    const t = Number(/^t=(\d+),/.exec(header)?.[1]);
    expect(t).toBeGreaterThanOrEqual(before);
    expect(t).toBeLessThanOrEqual(before + 1);
  });
});

describe('verifySignature', () => {
  const header = signPayload({ payload: BODY, secret: SECRET, timestamp: T });

  it('accepts its own signature (round trip)', () => {
    expect(verifySignature({ header, payload: BODY, secret: SECRET, now: at(T) })).toEqual({ ok: true, timestamp: T });
  });

  it('rejects a body changed by one byte', () => {
    const result = verifySignature({ header, payload: BODY.replace('Zoë', 'Zoe'), secret: SECRET, now: at(T) });
    expect(result).toMatchObject({ ok: false, reason: 'signature_mismatch', timestamp: T });
    if (!result.ok) expect(result.hint).toMatch(/secret.*body changed/s);
  });

  it('rejects the wrong secret', () => {
    expect(verifySignature({ header, payload: BODY, secret: 'whsec_other', now: at(T) })).toMatchObject({
      ok: false,
      reason: 'signature_mismatch',
    });
  });

  it('tolerates spaces around segments and values', () => {
    const spaced = ` t = ${T} ,  v1= ${digest(T, BODY)} `;
    expect(verifySignature({ header: spaced, payload: BODY, secret: SECRET, now: at(T) }).ok).toBe(true);
  });

  it('accepts reordered segments and ignores unknown ones', () => {
    const reordered = `v0=abc,v1=${digest(T, BODY)},scheme=x,t=${T}`;
    expect(verifySignature({ header: reordered, payload: BODY, secret: SECRET, now: at(T) }).ok).toBe(true);
  });

  it('accepts a header with several v1 values when any one matches (secret rotation)', () => {
    const rotated = `t=${T},v1=${digest(T, BODY, 'whsec_old')},v1=${digest(T, BODY)}`;
    expect(verifySignature({ header: rotated, payload: BODY, secret: SECRET, now: at(T) }).ok).toBe(true);
    const none = `t=${T},v1=${digest(T, BODY, 'whsec_old')},v1=${digest(T, BODY, 'whsec_older')}`;
    expect(verifySignature({ header: none, payload: BODY, secret: SECRET, now: at(T) }).ok).toBe(false);
  });

  it.each([
    ['missing header', undefined, 'missing_header'],
    ['empty header', '  ', 'missing_header'],
    ['no t', `v1=${digest(T, BODY)}`, 'malformed_header'],
    ['no v1', `t=${T}`, 'malformed_header'],
    ['empty v1', `t=${T},v1=`, 'malformed_header'],
    ['non-numeric t', `t=soon,v1=${digest(T, BODY)}`, 'malformed_header'],
    ['t with a fraction', `t=${T}.5,v1=${digest(T, BODY)}`, 'malformed_header'],
    ['garbage', 'hello world', 'malformed_header'],
  ])('reports %s as %s without throwing', (_name, value, reason) => {
    expect(verifySignature({ header: value, payload: BODY, secret: SECRET, now: at(T) })).toMatchObject({
      ok: false,
      reason,
    });
  });

  it.each([
    ['300 s in the past', T + 300, true],
    ['301 s in the past', T + 301, false],
    ['300 s in the future', T - 300, true],
    ['301 s in the future', T - 301, false],
    // The age at the clock's full precision, as the README's receivers take it: never rounded down to 300.
    ['300.6 s in the past', T + 300.6, false],
    ['299.4 s in the past', T + 299.4, true],
    ['300.6 s in the future', T - 300.6, false],
  ])('with the default tolerance, a timestamp %s is ok=%s', (_name, nowSeconds, ok) => {
    const result = verifySignature({ header, payload: BODY, secret: SECRET, now: at(nowSeconds) });
    expect(result.ok).toBe(ok);
    if (!result.ok) expect(result.reason).toBe('timestamp_outside_tolerance');
  });

  it('tells a timestamp ahead of the clock as a clock that is off, not as a replay', () => {
    const ahead = verifySignature({ header, payload: BODY, secret: SECRET, now: at(T - 301) });
    expect(ahead.ok === false && ahead.hint).toMatch(/301 s ahead of this machine's clock.*NTP/);
    const old = verifySignature({ header, payload: BODY, secret: SECRET, now: at(T + 301) });
    expect(old.ok === false && old.hint).toMatch(/too old.*replayed/);
  });

  it('honours a custom tolerance', () => {
    expect(verifySignature({ header, payload: BODY, secret: SECRET, tolerance: 10, now: at(T + 11) }).ok).toBe(false);
    expect(verifySignature({ header, payload: BODY, secret: SECRET, tolerance: 10, now: at(T + 10) }).ok).toBe(true);
  });

  it('tolerance 0 turns the time check off', () => {
    const aYearLater = T + 365 * 86_400;
    expect(verifySignature({ header, payload: BODY, secret: SECRET, tolerance: 0, now: at(aYearLater) }).ok).toBe(true);
  });

  it('checks the time before the digest, so a stale forged header says stale', () => {
    const result = verifySignature({ header: `t=${T},v1=00`, payload: BODY, secret: SECRET, now: at(T + 1000) });
    expect(result).toMatchObject({ ok: false, reason: 'timestamp_outside_tolerance' });
  });

  it('treats Buffer and string payloads with non-ASCII bytes the same', () => {
    const buffer = Buffer.from(BODY, 'utf8');
    const fromBuffer = signPayload({ payload: buffer, secret: SECRET, timestamp: T });
    expect(fromBuffer).toBe(header);
    expect(verifySignature({ header: fromBuffer, payload: BODY, secret: SECRET, now: at(T) }).ok).toBe(true);
  });

  it('verifies raw bytes that are not valid UTF-8 without re-encoding them', () => {
    const raw = Buffer.from([0x7b, 0xff, 0xfe, 0x00, 0x7d]);
    const signed = signPayload({ payload: raw, secret: SECRET, timestamp: T });
    expect(verifySignature({ header: signed, payload: raw, secret: SECRET, now: at(T) }).ok).toBe(true);
    // Decoding to a string replaces the bad bytes: the signature no longer matches.
    expect(verifySignature({ header: signed, payload: raw.toString('utf8'), secret: SECRET, now: at(T) }).ok).toBe(
      false,
    );
  });

  it('returns a mismatch, not an exception, for a v1 of a different length', () => {
    const short = `t=${T},v1=${digest(T, BODY).slice(0, 10)}`;
    const long = `t=${T},v1=${digest(T, BODY)}00`;
    for (const value of [short, long]) {
      expect(verifySignature({ header: value, payload: BODY, secret: SECRET, now: at(T) })).toMatchObject({
        reason: 'signature_mismatch',
      });
    }
  });

  it('rejects an uppercase digest: v1 is lowercase hex', () => {
    const upper = `t=${T},v1=${digest(T, BODY).toUpperCase()}`;
    expect(verifySignature({ header: upper, payload: BODY, secret: SECRET, now: at(T) }).ok).toBe(false);
  });

  it('hints at whitespace in the secret', () => {
    const result = verifySignature({ header, payload: BODY, secret: `${SECRET}\n`, now: at(T) });
    expect(result).toMatchObject({ ok: false, reason: 'signature_mismatch' });
    if (!result.ok) expect(result.hint).toMatch(/whitespace/);
  });

  it('joins a header given as an array (repeated header lines)', () => {
    const parts = [`t=${T}`, `v1=${digest(T, BODY)}`];
    expect(verifySignature({ header: parts, payload: BODY, secret: SECRET, now: at(T) }).ok).toBe(true);
  });
});
