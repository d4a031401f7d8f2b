import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ApiClient } from '../../src/api/index.js';
import { isSandboxBase, registerEndpoint } from '../../src/listen/index.js';
import { silentLogger } from '../../src/logger.js';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.js';

let t: TestSandbox;
let client: ApiClient;
let recordsPath: string;
beforeEach(async () => {
  t = await startTestSandbox();
  client = new ApiClient({ baseUrl: t.sandbox.apiBase, apiKey: t.sandbox.apiKey });
  recordsPath = join(t.dir, 'endpoints.json');
});
afterEach(() => t.close());

const register = (url: string) =>
  registerEndpoint({ client, url, events: ['*'], kept: true, recordsPath, logger: silentLogger });
const other = (fields: { apiBase: string; id: number }) => ({
  ...fields,
  url: 'https://elsewhere.example.com/hooks',
  secret: 'whsec_other',
  createdAt: '2026-11-01T00:00:00.000Z',
});

describe('registerEndpoint: the name `clockhook secret` needs for the record', () => {
  it('is none when the record is the only one on file, on creation and on reuse', async () => {
    const created = await register('http://127.0.0.1:4300/');
    expect(created.recordName).toBeNull();
    const reused = await register('http://127.0.0.1:4300/');
    expect(reused).toMatchObject({ endpoint: { id: created.endpoint.id }, recordName: null });
  });

  it("is the endpoint's id beside other records", async () => {
    await writeFile(recordsPath, JSON.stringify([other({ apiBase: 'https://api.example.com', id: 987 })]));
    const created = await register('http://127.0.0.1:4300/');
    expect(created.recordName).toBe(String(created.endpoint.id));
    expect(JSON.parse(await readFile(recordsPath, 'utf8'))).toHaveLength(2);
  });

  it('is its URL when a record on another API has the same id', async () => {
    const first = await register('http://127.0.0.1:4300/');
    const records = JSON.parse(await readFile(recordsPath, 'utf8'));
    await writeFile(
      recordsPath,
      JSON.stringify([...records, other({ apiBase: 'https://api.example.com', id: first.endpoint.id })]),
    );
    const reused = await register('http://127.0.0.1:4300/');
    expect(reused).toMatchObject({ endpoint: { id: first.endpoint.id }, recordName: 'http://127.0.0.1:4300/' });
  });
});

describe('registerEndpoint and the API base on file', () => {
  it('finds a record filed under another spelling of the same base (a trailing slash), and files it again as the client spells it', async () => {
    const first = await register('http://127.0.0.1:4300/');
    const [record] = JSON.parse(await readFile(recordsPath, 'utf8'));
    await writeFile(recordsPath, JSON.stringify([{ ...record, apiBase: `${record.apiBase}/` }]));
    const again = await register('http://127.0.0.1:4300/');
    expect(again).toMatchObject({ endpoint: { id: first.endpoint.id }, secret: first.secret });
    expect(JSON.parse(await readFile(recordsPath, 'utf8'))).toEqual([{ ...record, apiBase: client.baseUrl }]);
  });
});

describe('registerEndpoint and records of one sandbox filed under two ports (before they were found across ports)', () => {
  const url = 'http://127.0.0.1:4300/';
  const acrossPorts = () =>
    registerEndpoint({
      client,
      url,
      events: ['*'],
      kept: true,
      sameApi: isSandboxBase,
      recordsPath,
      logger: silentLogger,
    });
  const gone = (apiBase: string) => ({
    apiBase,
    url,
    id: 999,
    secret: 'whsec_gone',
    createdAt: '2026-11-01T00:00:00.000Z',
  });

  it('uses the one whose endpoint exists, though the record under this port is first, and does not delete it', async () => {
    const live = await register(url);
    const [record] = JSON.parse(await readFile(recordsPath, 'utf8'));
    await writeFile(
      recordsPath,
      JSON.stringify([gone(client.baseUrl), { ...record, apiBase: 'http://127.0.0.1:4310' }]),
    );
    const again = await acrossPorts();
    expect(again).toMatchObject({ endpoint: { id: live.endpoint.id }, secret: live.secret, recordName: null });
    expect(JSON.parse(await readFile(recordsPath, 'utf8'))).toEqual([{ ...record, apiBase: client.baseUrl }]);
  });

  it('forgets the other record once the API says its endpoint is gone', async () => {
    const live = await register(url);
    const [record] = JSON.parse(await readFile(recordsPath, 'utf8'));
    await writeFile(recordsPath, JSON.stringify([record, gone('http://127.0.0.1:4310')]));
    const again = await acrossPorts();
    expect(again).toMatchObject({ endpoint: { id: live.endpoint.id }, secret: live.secret, recordName: null });
    expect(JSON.parse(await readFile(recordsPath, 'utf8'))).toEqual([record]);
  });
});

describe('registerEndpoint beside another listen of the same folder', () => {
  it('keeps the record the other wrote while this one was creating its endpoint (the secret would be lost)', async () => {
    // This run's create call waits until the other run has registered (fetch is held, the sandbox is real).
    let creating!: () => void;
    const createStarted = new Promise<void>((resolve) => (creating = resolve));
    let letGo!: () => void;
    const held = new Promise<void>((resolve) => (letGo = resolve));
    const slow = new ApiClient({
      baseUrl: t.sandbox.apiBase,
      apiKey: t.sandbox.apiKey,
      fetch: async (input, init) => {
        if (init?.method === 'POST') {
          creating();
          await held;
        }
        return fetch(input, init);
      },
    });
    const first = registerEndpoint({
      client: slow,
      url: 'http://127.0.0.1:4300/',
      events: ['*'],
      kept: true,
      recordsPath,
      logger: silentLogger,
    });
    await createStarted;
    const second = await register('http://127.0.0.1:4500/');
    letGo();
    const firstDone = await first;
    const onFile = JSON.parse(await readFile(recordsPath, 'utf8')) as { url: string; id: number; secret: string }[];
    expect(onFile.map((r) => [r.url, r.id, r.secret]).sort()).toEqual(
      [
        ['http://127.0.0.1:4300/', firstDone.endpoint.id, firstDone.secret],
        ['http://127.0.0.1:4500/', second.endpoint.id, second.secret],
      ].sort(),
    );
  });
});
