import { execFile } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv } from 'ajv';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Scenario, scenarioProblem, typeName } from '../../src/captures/index.js';
import { addToShape, emptyShape, EVENT_TYPES, PING_EVENT_TYPE } from '../../src/contract/index.js';
import { launchChromium } from '../helpers/browser.js';
import { runCli } from '../helpers/cli.js';
import { SECRET, envelopeBody } from '../helpers/delivery.js';
import { postSigned, startListenProcess } from '../helpers/listen.js';
import { tempDir } from '../helpers/sandbox.js';

// One listen (capture-only) for the file: punch.created deliveries whose data drifts (a new field, then a field
// of another kind), an employee.created, then the types written from them and checked by tsc --strict.
const TSC = fileURLToPath(new URL('../../node_modules/typescript/bin/tsc', import.meta.url));
let dir: Awaited<ReturnType<typeof tempDir>>;
let listen: Awaited<ReturnType<typeof startListenProcess>>;
const cli = (...args: string[]) => runCli(args, { cwd: dir.path });
const punch = (n: number, data: Record<string, unknown>) =>
  envelopeBody(`evt_types_${n}`, { data: { id: n, employeeId: 7, ...data } });

const DELIVERIES = [
  punch(1, { hours: 8 }),
  punch(2, { hours: 7.5 }),
  envelopeBody('evt_types_e', { type: 'employee.created', data: { id: 7, firstName: 'Zoë', managerId: null } }),
  punch(3, { hours: 6, breakMinutes: 30 }), // a new field
  punch(4, { hours: 5, breakMinutes: 15 }),
  punch(5, { hours: '6.5', breakMinutes: 0 }), // hours of another kind
];

beforeAll(async () => {
  dir = await tempDir();
  listen = await startListenProcess(['--secret', SECRET], dir.path);
  for (const body of DELIVERIES) expect((await postSigned(listen.ready.listener, body, SECRET)).status).toBe(200);
}, 30_000);

afterAll(async () => {
  await listen?.stop('SIGKILL');
  await dir?.remove();
});

describe('a delivery shaped otherwise than the earlier ones of its type', () => {
  it('is said once by listen for each change, and marked on the page, which saves an event or a list as a scenario', async () => {
    const said = () => listen.stderr + JSON.stringify(listen.lines);
    await expect.poll(said).toContain('data.hours: string, was number');
    expect(said().match(/data\.breakMinutes: new field/g)).toHaveLength(1);
    expect(said().match(/data\.hours: string, was number/g)).toHaveLength(1);
    expect(said()).toContain('npx clockhook types');
    const browser = await launchChromium();
    try {
      const page = await browser.newPage();
      await page.goto(listen.ready.inspector as string);
      await page
        .locator('#captures .capture')
        .nth(DELIVERIES.length - 1)
        .waitFor();
      const marked = page.locator('#captures .capture', { has: page.locator('.badge.drift') });
      await expect.poll(() => marked.count()).toBe(2);
      expect(await marked.first().locator('.badge.drift').getAttribute('title')).toContain(
        'data.hours: string, was number',
      );
      // Saved as scenarios from the page: one event's deliveries, and what a narrowed list shows.
      const saved = async (button: import('playwright-core').Locator) => {
        const [download] = await Promise.all([page.waitForEvent('download'), button.click()]);
        return JSON.parse(await readFile(await download.path(), 'utf8')) as Scenario;
      };
      await page.locator('#captures .capture', { hasText: 'evt_types_e' }).click();
      const event = await saved(page.getByRole('button', { name: 'Save as scenario' }).first());
      expect(event.deliveries.map((d) => [d.event?.id, d.kind])).toEqual([['evt_types_e', 'first']]);
      await page.locator('#search').fill('evt_types_');
      await page.locator('#bulk').getByRole('button', { name: 'Save as scenario' }).waitFor();
      const shown = await saved(page.locator('#bulk').getByRole('button', { name: 'Save as scenario' }));
      expect(shown.deliveries.map((d) => d.event?.id)).toEqual(DELIVERIES.map((body) => JSON.parse(body).id));
      expect(scenarioProblem(shown)).toBeNull();
    } finally {
      await browser.close();
    }
  });
});

describe('clockhook types', () => {
  it('writes TypeScript that tsc --strict compiles, narrowing on type for every type, widened by what came', async () => {
    const written = await cli('types', '-o', 'webhook-events.ts');
    expect(written.code, written.stderr).toBe(0);
    const ts = await readFile(join(dir.path, 'webhook-events.ts'), 'utf8');
    expect(ts).toContain('/** punch.created: from 5 captures of punch.created. */');
    expect(ts).toMatch(/hours: number \| string;\n\s+breakMinutes\?: number;/);
    expect(ts).toContain('managerId: null;');
    expect(ts).toMatch(
      /\/\*\* shift\.published: never captured: shaped after clockhook's sandbox sample; the service does not document these fields/,
    );
    // A handler that narrows on type for each of the 38 and the ping, and uses the fields as they came.
    const cases = [...EVENT_TYPES, PING_EVENT_TYPE].map(
      (type) =>
        `    case '${type}': {\n      const narrowed: ${typeName(type)} = event;\n      return narrowed.type;\n    }`,
    );
    await writeFile(
      join(dir.path, 'handler.ts'),
      `import type { ${[...EVENT_TYPES, PING_EVENT_TYPE].map(typeName).join(', ')}, WebhookEvent } from './webhook-events.js';
export function hoursOf(event: WebhookEvent): number {
  if (event.type !== 'punch.created') return 0;
  const { hours, breakMinutes } = event.data;
  return (typeof hours === 'string' ? Number(hours) : hours) - (breakMinutes ?? 0) / 60;
}
export function handle(event: WebhookEvent): string {
  switch (event.type) {
${cases.join('\n')}
    default: {
      const none: never = event;
      return none;
    }
  }
}
`,
    );
    const args = ['--strict', '--noEmit', '--module', 'nodenext', '--target', 'es2022', 'handler.ts'];
    const compiled = await new Promise<{ code: number; out: string }>((resolve) =>
      execFile(process.execPath, [TSC, ...args], { cwd: dir.path }, (error, stdout, stderr) =>
        resolve({ code: error ? 1 : 0, out: stdout + stderr }),
      ),
    );
    expect(compiled, compiled.out).toEqual({ code: 0, out: '' });
  }, 60_000);

  it('writes JSON Schema that takes each delivery that came, told apart by type', async () => {
    const written = await cli('types', '--format', 'json-schema');
    expect(written.code, written.stderr).toBe(0);
    const schema = JSON.parse(written.stdout);
    expect(schema.oneOf).toHaveLength(39);
    const validate = new Ajv({ strict: false }).compile(schema);
    for (const body of DELIVERIES) expect(validate(JSON.parse(body)), JSON.stringify(validate.errors)).toBe(true);
    const punchData = schema.definitions.PunchCreatedEvent.properties.data;
    expect(punchData.properties.hours).toEqual({ type: ['number', 'string'] });
    expect(punchData.required).not.toContain('breakMinutes');
    expect(validate(JSON.parse(punch(9, { hours: true })))).toBe(false);
  });
});

describe('clockhook types --check, a CI gate on drift', () => {
  it('passes on the types written from the same captures, and names each field that moved after a drift', async () => {
    for (const [format, file] of [
      ['ts', 'checked.ts'],
      ['json-schema', 'checked.schema.json'],
    ]) {
      expect((await cli('types', '--format', format, '-o', file)).code).toBe(0);
      const fits = await cli('types', '--check', file);
      expect(fits, file).toMatchObject({ code: 0 });
      expect(fits.stdout).toContain(`${file}: the 6 deliveries of 2 event types fit.`);
    }
    // A delivery whose data moved: hours an object, note new, employeeId gone.
    const drifted = envelopeBody('evt_types_drift', { data: { id: 9, hours: { h: 8 }, note: 'x' } });
    expect((await postSigned(listen.ready.listener, drifted, SECRET)).status).toBe(200);
    const captureId = JSON.parse((await cli('captures', 'list', '--limit', '1', '--json')).stdout).id;
    for (const file of ['checked.ts', 'checked.schema.json']) {
      const moved = await cli('types', '--check', file);
      expect(moved.code, file).toBe(1);
      expect(moved.stdout).toContain(`punch.created data.hours: object, the types say number | string (${captureId})`);
      expect(moved.stdout).toContain(`punch.created data.note: a new field (string) (${captureId})`);
      expect(moved.stdout).toContain(
        `punch.created data.employeeId: gone, the types require it (number) (${captureId})`,
      );
      const json = JSON.parse((await cli('types', '--check', file, '--json')).stdout);
      expect(json).toMatchObject({ file, ok: false, checked: 7 });
      expect(json.moved.map((m: { path: string }) => m.path).sort()).toEqual([
        'data.employeeId',
        'data.hours',
        'data.note',
      ]);
    }
    // Its own types, written again, fit.
    expect((await cli('types', '-o', 'checked.ts')).code).toBe(0);
    expect((await cli('types', '--check', 'checked.ts')).code).toBe(0);
  });
});

describe('the shape of a type', () => {
  it('keeps at most 200 fields of an object keyed by ids, so that a map does not grow it without end', () => {
    const shape = emptyShape();
    const byId = (from: number) => Object.fromEntries(Array.from({ length: 150 }, (_, i) => [`emp_${from + i}`, i]));
    addToShape(shape, { byEmployee: byId(0) });
    const changes = addToShape(shape, { byEmployee: byId(150) });
    expect(shape.fields.get('byEmployee')?.fields.size).toBe(200);
    expect(changes.filter((change) => change.endsWith('new field'))).toHaveLength(50);
  });
});
