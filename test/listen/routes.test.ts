import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ListenSession, startListen } from '../../src/listen/index.js';
import { chooseRoute, type DeliveryReport, parseRoute } from '../../src/listener/index.js';
import { type Receiver, startReceiver } from '../helpers/receiver.js';
import { tempDir } from '../helpers/sandbox.js';

describe('parseRoute and chooseRoute', () => {
  it('read [TYPES=]TARGET: a target alone takes every type, a URL query is not types', () => {
    expect(parseRoute('punch.*,time_entry.*=3000/attendance')).toEqual({
      types: ['punch.*', 'time_entry.*'],
      target: '3000/attendance',
    });
    expect(parseRoute('3000/hooks')).toEqual({ types: null, target: '3000/hooks' });
    expect(parseRoute('http://localhost:3000/hooks?app=1')).toEqual({
      types: null,
      target: 'http://localhost:3000/hooks?app=1',
    });
    expect(parseRoute('*=4000')).toEqual({ types: null, target: '4000' });
    expect(() => parseRoute('punch.creatd=3000')).toThrow(
      /unknown event type "punch\.creatd" \(did you mean punch\.created\?\)/,
    );
    expect(() => parseRoute('payroll.*=3000')).toThrow(/unknown event type "payroll\.\*"/);
  });

  it('take the first route whose patterns match; a ping the first that takes every type', () => {
    const routes = [
      { name: 'a', types: ['punch.*', 'time_entry.*'] },
      { name: 'b', types: ['time_card.approved'] },
      { name: 'c', types: null },
      { name: 'd', types: ['punch.created'] },
    ];
    expect(chooseRoute(routes, 'punch.created')?.name).toBe('a');
    expect(chooseRoute(routes, 'time_card.approved')?.name).toBe('b');
    expect(chooseRoute(routes, 'time_card.rejected')?.name).toBe('c');
    expect(chooseRoute(routes, 'webhook_endpoint.ping')?.name).toBe('c');
    expect(chooseRoute(routes.slice(0, 2), 'employee.created')).toBeNull();
    expect(chooseRoute(routes.slice(0, 2), 'webhook_endpoint.ping')?.name).toBe('a');
  });
});

describe('listen with routes by event type', () => {
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let attendance: Receiver;
  let payroll: Receiver;
  let hooks: Receiver;
  let session: ListenSession;
  const reports: DeliveryReport[] = [];

  beforeAll(async () => {
    dir = await tempDir();
    [attendance, payroll, hooks] = await Promise.all([startReceiver(), startReceiver(), startReceiver()]);
    session = await startListen({
      forwardTo: [
        `punch.*,time_entry.*=${attendance.url}/attendance`,
        `time_card.*=${payroll.url}/payroll`,
        `${hooks.url}/hooks`,
      ],
      port: 0,
      sandboxPort: 0,
      inspector: false,
      stateDir: join(dir.path, '.clockhook'),
      onDelivery: (report) => reports.push(report),
    });
  }, 30_000);
  afterAll(async () => {
    await session?.close();
    await Promise.all([attendance, payroll, hooks].map((r) => r?.close()));
    await dir?.remove();
  });

  const trigger = (type: string) =>
    session.client!.request<{ id: string }>('POST', '/sandbox/events', { body: { type } });
  const reportOf = async (eventId: string) => {
    await expect.poll(() => reports.some((r) => r.eventId === eventId)).toBe(true);
    return reports.find((r) => r.eventId === eventId) as DeliveryReport;
  };

  it('lists the routes in the ready line', () => {
    expect(session.ready.routes).toEqual([
      `punch.*,time_entry.*=${attendance.url}/attendance`,
      `time_card.*=${payroll.url}/payroll`,
      `${hooks.url}/hooks`,
    ]);
  });

  it('sends each type to the first route that takes it, fan-in of several types included, and records the route', async () => {
    const cases: [string, Receiver, string][] = [
      ['punch.created', attendance, '/attendance'],
      ['time_entry.updated', attendance, '/attendance'],
      ['time_card.approved', payroll, '/payroll'],
      ['employee.created', hooks, '/hooks'],
    ];
    for (const [type, app, path] of cases) {
      const event = await trigger(type);
      const report = await reportOf(event.id);
      expect(report, type).toMatchObject({ status: 200, route: expect.stringContaining(new URL(app.url).port) });
      const got = app.received.find((r) => r.body.includes(event.id));
      expect(got?.url, type).toBe(path);
      const capture = session.store.get(report.captureId as string);
      expect(capture?.route).toBe(report.route);
    }
  });

  it('sends a ping to the first route that takes every type', async () => {
    const ack = await session.client!.pingEndpoint(session.ready.endpointId as number);
    const report = await reportOf(ack.eventId);
    expect(report.route).toBe(`${hooks.url}/hooks`);
    expect(hooks.received.some((r) => r.body.includes(ack.eventId))).toBe(true);
  });
});

describe('a delivery no route takes', () => {
  it('is captured, answered 200 by clockhook, and recorded with route null', async () => {
    const dir = await tempDir();
    const app = await startReceiver();
    const reports: DeliveryReport[] = [];
    const session = await startListen({
      forwardTo: [`punch.*=${app.url}`],
      port: 0,
      sandboxPort: 0,
      inspector: false,
      stateDir: join(dir.path, '.clockhook'),
      onDelivery: (report) => reports.push(report),
    });
    try {
      const event = await session.client!.request<{ id: string }>('POST', '/sandbox/events', {
        body: { type: 'employee.created' },
      });
      await expect.poll(() => reports.find((r) => r.eventId === event.id)).toBeDefined();
      const report = reports.find((r) => r.eventId === event.id) as DeliveryReport;
      expect(report).toMatchObject({ status: 200, route: null, target: null });
      expect(session.store.get(report.captureId as string)).toMatchObject({ route: null, forward: null });
      expect(app.received).toHaveLength(0);
      // The service counted it delivered.
      const attempts = (await session.client!.getEvent(event.id)).delivery_attempts;
      expect(attempts.map((a) => a.statusCode)).toEqual([200]);
    } finally {
      await session.close();
      await app.close();
      await dir.remove();
    }
  });
});
