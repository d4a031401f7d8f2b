import { SandboxClient } from '../api/sandbox-client.js';
import { readFile } from 'node:fs/promises';
import type { Command } from 'commander';
import { changedData, isDomainEventType, parseSetValue, PING_EVENT_TYPE, unknownTypeWords } from '../contract/index.js';
import { resolveApi, withApiOptions, type ApiFlags, type ResolvedApi } from './api-options.js';
import { CliError, UsageError } from '../errors.js';
import { eventTypesHelp } from './help.js';
import { printJson, printLine } from './output.js';
import { collect, parsePositiveInt } from './process.js';
import { counted } from '../counted.js';
import { OptionError } from '../errors.js';
import { whyUnreadable } from '../unreadable.js';

interface TriggerFlags extends ApiFlags {
  data?: string;
  set: string[];
  unset: string[];
  count: string;
  concurrency: string;
}

async function readStdin(): Promise<string> {
  if (process.stdin.isTTY)
    console.error('Reading the data object from standard input: type or paste it, then Ctrl-D on a line of its own.');
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * The data object of `--data <file>`; `-` reads it from standard input (`… | clockhook trigger <type> --data -`),
 * and a value that begins with `{` is the JSON itself (`--data '{"id": 42}'`, as curl's -d takes it).
 */
async function readData(path: string): Promise<Record<string, unknown>> {
  const inline = path.trimStart().startsWith('{');
  const name = path === '-' ? '- (standard input)' : inline ? '(the JSON given)' : path;
  let text: string;
  try {
    text = inline ? path : path === '-' ? await readStdin() : await readFile(path, 'utf8');
  } catch (error) {
    throw new UsageError(
      `cannot read --data ${name}: ${whyUnreadable(error)}. Pass a JSON file holding the data object.`,
    );
  }
  if (text.trim() === '')
    throw new UsageError(`--data ${name} is empty. Pass a JSON file holding the data object, such as {"id": 42}.`);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new UsageError(`--data ${name} is not valid JSON (${(error as Error).message}).`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new UsageError(`--data ${name} must hold a JSON object: the resource that goes in the envelope's data.`);
  }
  return value as Record<string, unknown>;
}

/**
 * The event's data: the sample (or --data), changed by each --set and --unset in turn. A value is JSON
 * when it parses, else a string; a path that does not exist is made; --unset of one is an error.
 */
async function dataOf(type: string, flags: TriggerFlags): Promise<Record<string, unknown> | undefined> {
  const data = flags.data ? await readData(flags.data) : undefined;
  if (flags.set.length === 0 && flags.unset.length === 0) return data;
  const set = flags.set.map((assignment): [string, unknown] => {
    const eq = assignment.indexOf('=');
    if (eq <= 0) throw new UsageError(`--set ${assignment}: write it as path=value, such as employee.name=Zoë.`);
    return [assignment.slice(0, eq), parseSetValue(assignment.slice(eq + 1))];
  });
  try {
    const changed = changedData(type, { data, set, unset: flags.unset });
    if ('missing' in changed)
      throw new OptionError(`--unset ${changed.missing}: the data has nothing at ${changed.missing}.`);
    return changed.data;
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

/** A real service has no way to emit events on request; only a sandbox answers /sandbox/health. */
async function isSandbox(api: ResolvedApi): Promise<boolean> {
  return api.fromSandbox || SandboxClient.answersAt(api.apiBase);
}

/** Runs `emit` `count` times, `concurrency` at a time; the results in the order they were started. */
async function burst<T>(count: number, concurrency: number, emit: () => Promise<T>): Promise<T[]> {
  const results: T[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, count) }, async () => {
      while (next < count) {
        const i = next++;
        results[i] = await emit();
      }
    }),
  );
  return results;
}

/** `clockhook trigger <type>`: emits an event on the sandbox, which delivers it to subscribed endpoints. */
export function registerTrigger(program: Command): void {
  withApiOptions(
    program
      .command('trigger <event-type>')
      .description('emit an event on the sandbox (sample data, or --data file.json)')
      .option(
        '--data <file>',
        'the data object: a JSON file, - for standard input, or the JSON itself (\'{"id": 42}\') (default: sample data for the type)',
      )
      .option(
        '--set <path=value>',
        'change the data: employee.name=Zoë, tags[0]=night, hourlyRate=24.5 (repeatable)',
        collect,
        [],
      )
      .option('--unset <path>', 'remove a field of the data (repeatable)', collect, [])
      .option('--count <n>', 'emit this many events of the type (a burst, to test ordering and load)', '1')
      .option('--concurrency <c>', 'with --count, this many emitted at a time', '1')
      .addHelpText('after', eventTypesHelp()),
  ).action(async (type: string, flags: TriggerFlags) => {
    if (type === PING_EVENT_TYPE)
      throw new UsageError(
        `${PING_EVENT_TYPE} is not an event to emit: send one to an endpoint with "npx clockhook endpoints ping <id>".`,
      );
    if (!isDomainEventType(type)) {
      throw new UsageError(`${unknownTypeWords(type)}.`);
    }
    const count = parsePositiveInt(flags.count, '--count');
    const concurrency = parsePositiveInt(flags.concurrency, '--concurrency');
    const data = await dataOf(type, flags);
    const api = await resolveApi(flags);
    if (!(await isSandbox(api))) {
      throw new CliError(
        `${api.apiBase} is the real service, which emits events only from real actions (punching in, approving a time card, …). To send a test delivery there, use "npx clockhook endpoints ping <id>"; to emit any event type, run "npx clockhook sandbox".`,
      );
    }
    const sandbox = new SandboxClient(api.client);
    const emit = () => sandbox.emit(type, data);
    if (count === 1) {
      const event = await emit();
      if (flags.json) printJson(event);
      else console.log(`Emitted ${event.type} ${event.id}. Its deliveries: "npx clockhook events get ${event.id}".`);
      return;
    }
    const events = await burst(count, concurrency, emit);
    if (flags.json) for (const event of events) printLine(event);
    else
      console.log(
        `Emitted ${counted(count, `${type} event`)}, ${concurrency} at a time: ${events[0].id} … ${events.at(-1)?.id}. Their deliveries: "npx clockhook events list --type ${type}".`,
      );
  });
}
