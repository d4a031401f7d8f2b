import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ApiClient } from '../../src/api/index.js';
import { registerEndpoint } from '../../src/listener/endpoint.js';
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

const register = (url: string) => registerEndpoint({ client, url, events: ['*'], kept: true, recordsPath, logger: silentLogger });
const other = (fields: { apiBase: string; id: number }) => ({ ...fields, url: 'https://elsewhere.example.com/hooks', secret: 'whsec_other', createdAt: '2026-11-01T00:00:00.000Z' });

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
    await writeFile(recordsPath, JSON.stringify([...records, other({ apiBase: 'https://api.example.com', id: first.endpoint.id })]));
    const reused = await register('http://127.0.0.1:4300/');
    expect(reused).toMatchObject({ endpoint: { id: first.endpoint.id }, recordName: 'http://127.0.0.1:4300/' });
  });
});
