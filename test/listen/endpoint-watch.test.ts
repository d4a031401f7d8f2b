import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { ApiClient } from '../../src/api/index.js';
import { EndpointWatch } from '../../src/listen/index.js';
import { silentLogger } from '../../src/logger.js';
import { startScriptedServer } from '../helpers/scripted-server.js';
import { recordingLogger } from '../helpers/logger.js';

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
let cleanup: (() => Promise<void>) | undefined;
afterEach(async () => {
  await cleanup?.();
  cleanup = undefined;
});

describe('EndpointWatch', () => {
  it('reads the endpoint once for a burst of failed deliveries, at most once per interval, and says when it was disabled', async () => {
    const endpoint = { id: 1, url: 'https://example.com/h', enabledEvents: ['*'], status: 'enabled' };
    const server = await startScriptedServer([
      { status: 200, body: endpoint },
      { status: 200, body: { ...endpoint, status: 'disabled' } },
    ]);
    const logger = recordingLogger();
    const { warnings } = logger;
    const watch = new EndpointWatch({
      client: new ApiClient({ baseUrl: server.url, apiKey: 'tt_live_testkey' }),
      endpoint,
      logger,
      now: Date.now,
      settleMs: 20,
      minIntervalMs: 1000,
    });
    cleanup = async () => {
      watch.close();
      await server.close();
    };

    for (let i = 0; i < 50; i++) watch.deliveryFailed();
    await expect.poll(() => server.requests.length).toBe(1);
    await pause(100);
    expect(server.requests.map((r) => `${r.method} ${r.url}`)).toEqual(['GET /webhookEndpoint/1']);
    expect(warnings).toEqual([]);

    // More failures within the interval: one more read, once the interval is over.
    for (let i = 0; i < 50; i++) watch.deliveryFailed();
    await pause(300);
    expect(server.requests).toHaveLength(1);
    await expect.poll(() => server.requests.length).toBe(2);
    await expect.poll(() => watch.current?.status).toBe('disabled');
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/^Endpoint 1 is now disabled: .+clockhook endpoints enable 1/);
  });

  it('says once that the endpoint was deleted, shows it as deleted, and reads it no more', async () => {
    const endpoint = { id: 1, url: 'https://example.com/h', enabledEvents: ['*'], status: 'enabled' };
    const server = await startScriptedServer([
      {
        status: 404,
        body: {
          error: {
            type: 'invalid_request_error',
            code: 'resource_not_found',
            message: 'No such webhook endpoint 1.',
            requestId: 'req_1',
          },
        },
      },
    ]);
    const logger = recordingLogger();
    const watch = new EndpointWatch({
      client: new ApiClient({ baseUrl: server.url, apiKey: 'tt_live_testkey' }),
      endpoint,
      logger,
      now: Date.now,
    });
    cleanup = async () => {
      watch.close();
      await server.close();
    };
    expect(await watch.read()).toEqual({ ...endpoint, status: 'deleted' });
    expect(logger.warnings).toEqual([
      "Endpoint 1 was deleted (npx clockhook endpoints delete, or the service's dashboard): the service sends nothing here any more. Restart listen to register a new one; its secret is new, so give it to your app again.",
    ]);
    // Gone for good: asking again would only cost requests.
    await watch.read();
    expect(server.requests).toHaveLength(1);
    expect(logger.warnings).toHaveLength(1);
  });

  it('ends a read in flight when it is closed, so the run can exit', async () => {
    // A service that never answers.
    const server = createServer(() => {});
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    cleanup = () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      });
    const endpoint = { id: 1, url: 'https://example.com/h', enabledEvents: ['*'], status: 'enabled' };
    const watch = new EndpointWatch({
      client: new ApiClient({
        baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
        apiKey: 'tt_live_testkey',
      }),
      endpoint,
      logger: silentLogger,
      now: Date.now,
    });
    const read = watch.read();
    await pause(50);
    watch.close();
    await expect(read).rejects.toMatchObject({ name: 'AbortError' });
    expect(watch.current).toBe(endpoint);
  });
});
