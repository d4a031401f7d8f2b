// `clockhook types --check <file>`: a CI gate on payload drift. The deliveries captured here (or a scenario's)
// are held to the types the project committed; each field path that moved is listed with the delivery it came
// in, and the exit is 1 (docs/types.md).
import { readFile } from 'node:fs/promises';
import { counted } from '../counted.js';
import { CliError, UsageError } from '../errors.js';
import type { Checked, Moved } from '../captures/index.js';
import { readStore } from './capture-options.js';
import { PAINT, printJson, writeLine } from './output.js';

export interface CheckTypesFlags {
  check: string;
  scenario?: string;
  db?: string;
  json?: boolean;
}

/** The deliveries to check: a scenario's, else the captured ones (the service's, with their whole body). */
async function deliveriesToCheck(flags: CheckTypesFlags): Promise<Checked[]> {
  const { loadScenario, withBody } = await import('../captures/index.js');
  const { deliveryData, envelopeData } = await import('../listener/shapes.js');
  const checked: Checked[] = [];
  if (flags.scenario !== undefined) {
    const scenario = await loadScenario(flags.scenario);
    for (const [i, delivery] of scenario.deliveries.entries()) {
      const body = Buffer.from(delivery.body, delivery.bodyEncoding).toString('utf8');
      const data = envelopeData(body);
      if (delivery.event?.type && data) checked.push({ type: delivery.event.type, data: data.data, from: `#${i + 1}` });
    }
    return checked;
  }
  const reading = await readStore(flags);
  for (const capture of reading.captures) {
    if (!capture.envelope?.type || capture.source !== 'delivery') continue;
    const { body, missing } = await withBody(reading, capture);
    const data = missing ? undefined : deliveryData(capture, body.toString('utf8'));
    if (data) checked.push({ type: capture.envelope.type, data: data.data, from: capture.id });
  }
  return checked;
}

const movedLine = (m: Moved) =>
  `  ${m.type} ${m.path}: ${m.words} (${m.from}${m.count > 1 ? `, and ${m.count - 1} more` : ''})`;

/** Checks the deliveries against `flags.check`; exit 1 when one does not fit. */
export async function checkTypes(flags: CheckTypesFlags): Promise<void> {
  const { checkAgainstTypes, readDeclared } = await import('../captures/index.js');
  const text = await readFile(flags.check, 'utf8').catch((error: NodeJS.ErrnoException) => {
    throw new CliError(
      `--check ${flags.check}: ${error.code === 'ENOENT' ? 'no such file' : error.message}. Write the types first: npx clockhook types -o ${flags.check}`,
    );
  });
  const declared = readDeclared(text, flags.check);
  if (declared.size === 0)
    throw new UsageError(
      `--check ${flags.check} declares no event type: write it with npx clockhook types -o ${flags.check}`,
    );
  const deliveries = await deliveriesToCheck(flags);
  const moved = checkAgainstTypes(deliveries, declared);
  const types = new Set(deliveries.map((d) => d.type)).size;
  if (flags.json) printJson({ file: flags.check, ok: moved.length === 0, checked: deliveries.length, moved });
  else if (deliveries.length === 0)
    writeLine(
      `${flags.check}: no deliveries to check${flags.scenario ? ` in ${flags.scenario}` : ' were captured here'}.`,
    );
  else if (moved.length === 0)
    writeLine(
      PAINT.ok(
        `${flags.check}: the ${counted(deliveries.length, 'delivery', 'deliveries')} of ${counted(types, 'event type')} fit.`,
      ),
    );
  else {
    const movedTypes = new Set(moved.map((m) => m.type)).size;
    writeLine(
      PAINT.bad(
        `${flags.check}: ${counted(moved.length, 'field')} moved in ${counted(movedTypes, 'event type')}, of ${counted(deliveries.length, 'delivery', 'deliveries')} checked:`,
      ),
    );
    for (const m of moved) writeLine(movedLine(m));
    writeLine(`When the change is meant, write the types again: npx clockhook types -o ${flags.check}`);
  }
  if (moved.length > 0) process.exitCode = 1;
}
