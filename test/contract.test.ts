import { describe, expect, it } from 'vitest';
import {
  changedData,
  checkEnvelope,
  EVENT_TYPES,
  matchesSubscription,
  PING_EVENT_TYPE,
  sampleData,
  suggestEventType,
  validateSubscription,
} from '../src/contract/index.js';

const VALID_ENVELOPE = {
  id: 'evt_01',
  object: 'event',
  type: 'punch.created',
  api_version: '2026-11-01',
  created: 1_790_000_000,
  data: { id: 1 },
};

describe('event-type catalogue', () => {
  it('holds every type of the 13 resources of the contract', () => {
    expect(EVENT_TYPES).toHaveLength(38);
    const resources = new Set(EVENT_TYPES.map((t) => t.split('.')[0]));
    expect([...resources].sort()).toEqual(
      [
        'employee',
        'punch',
        'time_entry',
        'shift',
        'location',
        'job_code',
        'position',
        'group',
        'geofence',
        'pto_request',
        'pay_period',
        'time_card',
        'schedule',
      ].sort(),
    );
    expect(EVENT_TYPES).toContain('pto_request.cancelled');
    expect(EVENT_TYPES).toContain('pay_period.reopened');
    expect(EVENT_TYPES).not.toContain(PING_EVENT_TYPE);
  });

  it('matches * and exact types, never the ping type through a filter', () => {
    expect(matchesSubscription('punch.created', ['*'])).toBe(true);
    expect(matchesSubscription('punch.created', ['punch.created'])).toBe(true);
    expect(matchesSubscription('punch.updated', ['punch.created'])).toBe(false);
    expect(matchesSubscription(PING_EVENT_TYPE, ['*'])).toBe(false);
    expect(matchesSubscription(PING_EVENT_TYPE, [PING_EVENT_TYPE])).toBe(false);
    expect(matchesSubscription('punch.exploded', ['*'])).toBe(false);
  });

  it('refuses unknown and ping types in a subscription, listing the valid ones', () => {
    const result = validateSubscription(['punch.created', 'punch.exploded', PING_EVENT_TYPE]);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.invalid).toEqual(['punch.exploded', PING_EVENT_TYPE]);
    expect(result.message).toContain('employee.created');
    expect(result.message).toContain('not subscribable');
  });

  it('suggests the type a mistyped one most likely meant, and none for something else', () => {
    expect(suggestEventType('employe.created')).toBe('employee.created');
    expect(suggestEventType('punch_created')).toBe('punch.created');
    expect(suggestEventType('Shift.Published')).toBe('shift.published');
    expect(suggestEventType('pto_request.approve')).toBe('pto_request.approved');
    expect(suggestEventType('timecard.approved')).toBe('time_card.approved');
    expect(suggestEventType('punch')).toBeNull();
    expect(suggestEventType('zzz')).toBeNull();
    expect(suggestEventType('payroll.exported')).toBeNull();
    const result = validateSubscription(['punch.creatd', 'zzz']);
    expect(!result.ok && result.message).toMatch(
      /^unknown event type "punch\.creatd" \(did you mean punch\.created\?\); unknown event type "zzz" \(none of the 38 types is close: npx clockhook trigger --help lists them\)\. Valid types/,
    );
  });

  it('refuses an empty or non-array subscription and accepts *', () => {
    expect(validateSubscription([]).ok).toBe(false);
    expect(validateSubscription('*').ok).toBe(false);
    expect(validateSubscription(['*'])).toEqual({ ok: true, types: ['*'] });
  });
});

describe('checkEnvelope', () => {
  it('finds nothing wrong with a conforming envelope', () => {
    expect(checkEnvelope(VALID_ENVELOPE)).toEqual([]);
    expect(checkEnvelope({ ...VALID_ENVELOPE, type: PING_EVENT_TYPE })).toEqual([]);
  });

  it.each([
    ['id', { id: 'ev_1' }],
    ['id', { id: 42 }],
    ['object', { object: 'Event' }],
    ['api_version', { api_version: '2026-13-01' }],
    ['api_version', { api_version: 'v2' }],
    ['api_version', { api_version: '2026-02-30' }],
    ['created', { created: 1.5 }],
    ['created', { created: '1790000000' }],
    ['created', { created: 1_790_000_000_000 }],
    ['type', { type: 'punch.exploded' }],
    ['data', { data: [1] }],
    ['data', { data: null }],
  ])('flags %s in %j', (field, change) => {
    expect(checkEnvelope({ ...VALID_ENVELOPE, ...change }).map((p) => p.field)).toEqual([field]);
  });

  it('says what is wrong with the type: missing, not a string, or unknown', () => {
    const message = (change: object) =>
      checkEnvelope({ ...VALID_ENVELOPE, ...change }).find((p) => p.field === 'type')?.message;
    expect(message({ type: undefined })).toBe('missing: must name an event type, such as "punch.created"');
    expect(message({ type: 7 })).toBe('must be a string naming an event type');
    expect(message({ type: 'punch.exploded' })).toBe('unknown event type "punch.exploded"');
  });

  it('flags a body that is not an object', () => {
    expect(checkEnvelope([1, 2])).toHaveLength(1);
    expect(checkEnvelope('text')).toHaveLength(1);
  });
});

describe("an event's data, changed by paths", () => {
  it('takes a path relative to data, or with data. before it once, never making data twice', () => {
    const plain = changedData('employee.updated', { set: [['hourlyRate', '26.00']] });
    const prefixed = changedData('employee.updated', { set: [['data.hourlyRate', '26.00']] });
    expect(prefixed).toEqual(plain);
    expect('data' in prefixed && prefixed.data.data).toBeUndefined();
    expect(changedData('employee.updated', { unset: ['data.hourlyRate'] })).toEqual(
      changedData('employee.updated', { unset: ['hourlyRate'] }),
    );
    expect(changedData('employee.updated', { unset: ['data.nothing'] })).toEqual({ missing: 'data.nothing' });
  });
});

describe('sample data', () => {
  it('has a camelCase resource for every event type', () => {
    for (const type of EVENT_TYPES) {
      const data = sampleData(type);
      expect(typeof data.id, type).toBe('number');
      for (const key of Object.keys(data)) expect(key, `${type}.${key}`).not.toMatch(/_/);
    }
  });

  it('refers to resources that exist in the samples', () => {
    const punch = sampleData('punch.created');
    expect(sampleData('employee.created').id).toBe(punch.employeeId);
    expect(sampleData('location.created').id).toBe(punch.locationId);
    expect(sampleData('geofence.created').locationId).toBe(punch.locationId);
    expect(sampleData('time_card.approved').payPeriodId).toBe(sampleData('pay_period.approved').id);
  });

  it('reflects the action in the type and returns a fresh copy each time', () => {
    expect(sampleData('pto_request.approved').status).toBe('approved');
    expect(sampleData('pto_request.denied').status).toBe('denied');
    const first = sampleData('employee.created');
    first.firstName = 'changed';
    expect(sampleData('employee.created').firstName).toBe('Ada');
  });

  it('refuses unknown and ping types', () => {
    expect(() => sampleData('punch.exploded')).toThrow(/unknown event type/);
    expect(() => sampleData(PING_EVENT_TYPE)).toThrow(/endpoint record/);
  });
});
