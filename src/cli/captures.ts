import { existsSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { counted } from '../counted.js';
import { type Command, Option } from 'commander';
// The captures' leaves, not their index (which brings scenario playback and replay): see docs/performance-notes.md,
// "A CLI start".
import { curlScript } from '../captures/curl.js';
import { fixtureOf } from '../captures/fixture.js';
import { harOf } from '../captures/har.js';
import { SCENARIO_SCHEMA, scenarioOf } from '../captures/scenario.js';
import { selectCaptures } from '../captures/select.js';
import { wholeCapture, withBody, type WithBody } from '../captures/whole.js';
import { captureStoryOf, type EventStory, storiesOf, withStory } from '../story/index.js';
import type { Capture, StoreReading } from '../store/index.js';
import { type CaptureFlags, filterOf, namedCaptures, readStore, withCaptureFilters } from './capture-options.js';
import { UsageError } from '../errors.js';
import { PAINT, printJson, writeLine } from './output.js';
import { captureFacts, deliveryLine } from './delivery-line.js';
import { packageVersion } from './version.js';
import { folderFiles } from '../folder/index.js';
import { makeOutputFolder, writeOutputFile } from './output-file.js';

interface ExportFlags extends CaptureFlags {
  format: 'har' | 'curl' | 'fixture' | 'ndjson' | 'scenario';
  output?: string;
  to?: string;
  asIs?: boolean;
}

/** One capture on one line, as listen prints a delivery (see deliveryLine), with its id. */
export function captureLine(capture: Capture, stories: ReadonlyMap<string, EventStory>): string {
  const facts = captureFacts(capture, captureStoryOf(capture, stories));
  return deliveryLine(facts, { id: true, at: new Date(capture.receivedAt) });
}

/**
 * What an empty list says: with --status failed, that nothing failed is good news; a store given with --db (or
 * $CLOCKHOOK_DB) that is not there is named, since a mistyped path reads as empty.
 */
function noCaptures(status: string | undefined, path: string, gone: boolean): string {
  if (status === 'failed') return 'No failed events: the newest delivery of each, or a replay since, got a 2xx.';
  if (gone && path !== folderFiles().captures)
    return `No captures: there is no store at ${path} (clockhook listen --db ${path} makes one).`;
  return 'No captures. clockhook listen captures every delivery it receives.';
}

/** A body for people: pretty JSON when it is JSON, the text otherwise, base64 said as such. */
function bodyText(body: Buffer): string {
  const text = body.toString('utf8');
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return Buffer.from(text, 'utf8').equals(body) ? text : `(not UTF-8; base64) ${body.toString('base64')}`;
  }
}

async function showCapture(reading: StoreReading, capture: Capture): Promise<string> {
  const story = captureStoryOf(capture, storiesOf(reading.captures));
  const { body, missing } = await withBody(reading, capture);
  const headers = Object.entries(capture.headers).map(([name, value]) => `  ${name}: ${String(value)}`);
  const { status, reason, hint } = capture.signature;
  const forward = capture.forward;
  // The status and the app's time as the story judged them, the same as captures list and listen's line.
  const shown = PAINT[story.tone](story.status);
  const time = story.durationMs === null ? '' : ` in ${story.durationMs} ms`;
  const answer = capture.rejected
    ? `clockhook answered ${shown} ${capture.rejected.code} (not forwarded)`
    : forward === null
      ? `clockhook answered ${shown} (capture-only: no --forward-to)`
      : forward
        ? `${forward.target} answered ${shown}${forward.error ? ` (${forward.error})` : ''}${time}\n${bodyText(Buffer.from(forward.body, forward.bodyEncoding))}`
        : `${shown} still with the app: no answer recorded yet`;
  return [
    `${capture.id}  ${capture.receivedAt}  ${capture.source}${capture.replayOf ? ` of ${capture.replayOf}` : ''}`,
    `${capture.method} ${capture.path}`,
    ...headers,
    '',
    bodyText(body),
    ...(missing ? [PAINT.bad(`(body missing) ${missing}`)] : []),
    '',
    `Signature: ${status}${reason ? ` (${reason})` : ''}${hint ? `: ${hint}` : ''}`,
    `Answer: ${answer}`,
    `Story: ${story.words}; the event is ${PAINT[story.event.tone](story.event.words)}`,
    ...(capture.trace ? [`Trace: ${capture.trace.traceId}`] : []),
  ].join('\n');
}

/**
 * Every capture with its whole body (from its body file when it is over 16 KiB). One whose body file is gone
 * comes with its beginning, marked (`bodyMissing`; a curl script skips it, a fixture folder leaves it out),
 * and is named once on stderr: it never stops the export of the others.
 */
async function withBodies(reading: StoreReading, captures: Capture[]): Promise<WithBody[]> {
  const all = await Promise.all(captures.map((capture) => withBody(reading, capture)));
  const missing = all.filter((one) => one.missing);
  if (missing.length > 0) {
    const ids = missing.map((one) => one.capture.id).join(', ');
    console.error(
      `The body file of ${counted(missing.length, 'capture')} is gone (${ids}): exported with the beginning the store kept, marked bodyMissing; curl scripts and fixtures leave them out.`,
    );
  }
  return all;
}

/** The package's scenario schema, as a scenario written to `out` finds it: relative to that file's folder. */
function schemaFrom(out: string): string {
  const schema = fileURLToPath(new URL('../../clockhook.scenario.schema.json', import.meta.url));
  const path = relative(dirname(resolve(out)), schema)
    .split(sep)
    .join('/');
  return path.startsWith('.') ? path : `./${path}`;
}

/** The export as one text, in `flags.format`. */
function exportText(
  flags: ExportFlags,
  captures: WithBody[],
  whole: WithBody[],
  stories: ReadonlyMap<string, EventStory>,
): string {
  const json = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`;
  switch (flags.format) {
    case 'har':
      return json(harOf(captures, packageVersion, stories));
    case 'curl':
      return curlScript(captures, { to: flags.to, asIs: Boolean(flags.asIs) });
    case 'fixture':
      return json(whole.map(({ capture, body }) => fixtureOf(capture, body)));
    case 'scenario':
      return json(scenarioOf(whole, stories, flags.output ? schemaFrom(flags.output) : SCENARIO_SCHEMA));
    case 'ndjson':
      return captures
        .map(({ capture, body, missing }) => `${JSON.stringify(wholeCapture(capture, body, stories, missing))}\n`)
        .join('');
  }
}

async function exportCaptures(ids: string[], flags: ExportFlags): Promise<void> {
  const filter = filterOf(flags, ids);
  const reading = await readStore(flags);
  if (ids.length > 0) namedCaptures(reading, ids);
  // In the order of the ids given, else oldest first, as the deliveries came.
  const stories = storiesOf(reading.captures);
  const selected = selectCaptures(reading.captures, filter, stories);
  const captures = await withBodies(reading, ids.length > 0 ? selected : selected.reverse());
  // A fixture of a body cut short would test a handler with a delivery the service never sent.
  const whole = captures.filter((one) => !one.missing);
  const out = flags.output;
  if (flags.format === 'fixture' && out && !out.endsWith('.json')) {
    await makeOutputFolder(out);
    for (const { capture, body } of whole) {
      const file = join(out, `${capture.id}.json`);
      await writeOutputFile(file, `${JSON.stringify(fixtureOf(capture, body), null, 2)}\n`);
    }
    console.error(`Wrote ${counted(whole.length, 'fixture')} to ${join(out, sep)}.`);
    return;
  }
  if (flags.format === 'scenario' && whole.length === 0)
    throw new UsageError('No captures with their whole body to put in a scenario: choose others (captures list).');
  const text = exportText(flags, captures, whole, stories);
  if (out) {
    await writeOutputFile(out, text, flags.format === 'curl' ? { mode: 0o755 } : {});
    const written = flags.format === 'fixture' || flags.format === 'scenario' ? whole : captures;
    console.error(`Wrote ${counted(written.length, 'capture')} to ${out}.`);
  } else process.stdout.write(text);
}

/** `clockhook captures list|show|export`: the capture store from the command line, read while listen runs. */
export function registerCaptures(program: Command): void {
  const captures = program.command('captures').description('list, show and export captured deliveries');
  withCaptureFilters(captures.command('list').description('list captures, newest first'))
    .option('--limit <n>', 'how many', '20')
    .option('--json', 'one capture per line, as stored, with its story')
    .action(async (flags: CaptureFlags) => {
      const filter = filterOf(flags);
      const { captures: all, path } = await readStore(flags);
      const stories = storiesOf(all);
      const chosen = selectCaptures(all, filter, stories);
      if (flags.json) for (const capture of chosen) writeLine(JSON.stringify(withStory(capture, stories)));
      else if (chosen.length === 0) {
        const gone = all.length === 0 && !existsSync(path) && !existsSync(`${path}.journal`);
        console.log(noCaptures(filter.status, path, gone));
      } else for (const capture of chosen) writeLine(captureLine(capture, stories));
    });
  captures
    .command('show <capture-id>')
    .description('show a whole capture: headers, body, signature verdict, the answer')
    .option('--db <file>', 'the capture store (default: $CLOCKHOOK_DB, else .clockhook/captures.json)')
    .option('--json', 'the capture as stored, with its whole body')
    .action(async (id: string, flags: CaptureFlags) => {
      filterOf(flags, [id]);
      const reading = await readStore(flags);
      const [capture] = namedCaptures(reading, [id]);
      if (!flags.json) return console.log(await showCapture(reading, capture));
      const { body, missing } = await withBody(reading, capture);
      printJson(wholeCapture(capture, body, storiesOf(reading.captures), missing));
    });
  withCaptureFilters(
    captures
      .command('export [capture-ids...]')
      .description('export captures as HAR, curl, fixtures, NDJSON or a scenario to play'),
  )
    .addOption(
      new Option('--format <format>', 'required: har, curl, fixture, ndjson or scenario')
        .choices(['har', 'curl', 'fixture', 'ndjson', 'scenario'])
        .makeOptionMandatory(),
    )
    .option('-o, --output <file>', 'write to this file (a folder for one fixture file per capture) instead of stdout')
    .option('--to <url>', 'curl: send to this listener URL (default: the Host each capture arrived at)')
    .option('--as-is', 'curl: keep the signature each arrived with (default: re-signed when the script runs)')
    .action((ids: string[], flags: ExportFlags) => {
      if (flags.to !== undefined && !URL.canParse(flags.to))
        throw new UsageError(`--to ${flags.to} is not a URL, e.g. http://127.0.0.1:4300/`);
      return exportCaptures(ids, flags);
    });
}
