import { describe, expect, it } from 'vitest';
import type { WebhookEndpoint } from '../../src/contract/index.js';
import type { EndpointRecordOnFile } from '../../src/folder/index.js';
import { chooseEndpoint, type EndpointChoiceInput } from '../../src/listen/index.js';

const BASE = 'http://127.0.0.1:4302';
const OTHER_PORT = 'http://127.0.0.1:4310';
const URL_HERE = 'http://127.0.0.1:4300/';
const KEPT = 'clockhook listen (created automatically; kept for its next run)';
const TEMPORARY = 'clockhook listen (created automatically; deleted when it exits)';

const record = (id: number, url: string, apiBase = BASE, extra: Partial<EndpointRecordOnFile> = {}) => ({
  apiBase,
  url,
  id,
  secret: `whsec_${id}`,
  createdAt: '2026-11-25T10:00:00Z',
  ...extra,
});
const endpoint = (id: number, url: string, extra: Partial<WebhookEndpoint> = {}): WebhookEndpoint => ({
  id,
  url,
  enabledEvents: ['*'],
  description: KEPT,
  status: 'enabled',
  ...extra,
});
const input = (over: Partial<EndpointChoiceInput>): EndpointChoiceInput => ({
  records: [],
  endpoints: [],
  apiBase: BASE,
  url: URL_HERE,
  events: ['*'],
  description: KEPT,
  ...over,
});
const sameOrigin = (a: string, b: string) => new URL(a).origin === new URL(b).origin;

/** Each case: what is on file, what the API has, and what listen must do. */
const cases: { name: string; given: Partial<EndpointChoiceInput>; expected: Record<string, unknown> }[] = [
  {
    name: 'nothing on file, nothing at the API: create',
    given: {},
    expected: { action: 'create', remove: [], gone: [] },
  },
  {
    name: 'the record for the URL and its endpoint: reuse it as it is, file untouched',
    given: { records: [record(1, URL_HERE)], endpoints: [endpoint(1, URL_HERE)] },
    expected: { action: 'reuse', patch: {}, rewrite: false, remove: [], gone: [] },
  },
  {
    name: 'reused with other events and the other description: patched',
    given: {
      records: [record(1, URL_HERE)],
      endpoints: [endpoint(1, URL_HERE, { enabledEvents: ['punch.created'], description: TEMPORARY })],
    },
    expected: { action: 'reuse', patch: { enabledEvents: ['*'], description: KEPT }, rewrite: false },
  },
  {
    name: "someone's own endpoint description is never changed",
    given: { records: [record(1, URL_HERE)], endpoints: [endpoint(1, URL_HERE, { description: 'mine' })] },
    expected: { action: 'reuse', patch: {} },
  },
  {
    name: 'the record names an endpoint the API no longer has: create, and forget the record',
    given: { records: [record(1, URL_HERE)] },
    expected: { action: 'create', gone: [record(1, URL_HERE)] },
  },
  {
    name: 'the endpoint on file now points elsewhere: not ours to reuse, create',
    given: { records: [record(1, URL_HERE)], endpoints: [endpoint(1, 'https://example.com/hooks')] },
    expected: { action: 'create', gone: [], remove: [] },
  },
  {
    name: 'an endpoint of ours at the URL without a secret on file: removed, then create',
    given: { endpoints: [endpoint(7, URL_HERE)] },
    expected: { action: 'create', remove: [endpoint(7, URL_HERE)] },
  },
  {
    name: "someone's own endpoint at the URL is left alone (the create then explains the conflict)",
    given: { endpoints: [endpoint(7, URL_HERE, { description: 'production' })] },
    expected: { action: 'create', remove: [] },
  },
  {
    name: 'a record of this API under another sandbox port: reused, refiled under this base',
    given: {
      records: [record(1, URL_HERE, OTHER_PORT)],
      endpoints: [endpoint(1, URL_HERE)],
      sameApi: (base: string) => base.startsWith('http://127.0.0.1:'),
    },
    expected: { action: 'reuse', rewrite: true, record: record(1, URL_HERE, BASE) },
  },
  {
    name: 'a record under another API, not this one: ignored, create',
    given: { records: [record(1, URL_HERE, 'https://api.example.com')], endpoints: [endpoint(1, URL_HERE)] },
    expected: { action: 'create' },
  },
  {
    name: "this port's endpoint under another --path: moved here, secret kept, after stale ones go",
    given: {
      url: 'http://127.0.0.1:4300/hooks',
      records: [record(1, URL_HERE)],
      endpoints: [endpoint(1, URL_HERE), endpoint(9, 'http://127.0.0.1:4300/hooks')],
      movable: (r: EndpointRecordOnFile) => sameOrigin(r.listener ?? r.url, URL_HERE),
      listener: 'http://127.0.0.1:4300/hooks',
    },
    expected: {
      action: 'move',
      patch: { url: 'http://127.0.0.1:4300/hooks' },
      rewrite: true,
      remove: [endpoint(9, 'http://127.0.0.1:4300/hooks')],
      record: record(1, 'http://127.0.0.1:4300/hooks'),
    },
  },
  {
    name: 'moved to a relay channel: the record names the listener it delivers to',
    given: {
      url: 'https://relay.example.com/c/abc',
      records: [record(1, URL_HERE)],
      endpoints: [endpoint(1, URL_HERE)],
      movable: (r: EndpointRecordOnFile) => sameOrigin(r.listener ?? r.url, URL_HERE),
      listener: URL_HERE,
    },
    expected: {
      action: 'move',
      record: record(1, 'https://relay.example.com/c/abc', BASE, { listener: URL_HERE }),
    },
  },
  {
    name: 'an older duplicate record for the URL whose endpoint is gone: it leaves with the reuse',
    given: {
      records: [record(1, URL_HERE), record(2, URL_HERE)],
      endpoints: [endpoint(1, URL_HERE)],
    },
    expected: { action: 'reuse', rewrite: true, gone: [record(2, URL_HERE)] },
  },
];

describe('chooseEndpoint', () => {
  it.each(cases)('$name', ({ given, expected }) => {
    expect(chooseEndpoint(input(given))).toMatchObject(expected);
  });

  it('reuses the record filed under this base before one filed under another port of the same API', () => {
    const choice = chooseEndpoint(
      input({
        records: [record(2, URL_HERE, OTHER_PORT), record(1, URL_HERE)],
        endpoints: [endpoint(1, URL_HERE), endpoint(2, URL_HERE)],
        sameApi: () => true,
      }),
    );
    expect(choice).toMatchObject({ action: 'reuse', onFile: { id: 1 } });
  });
});
