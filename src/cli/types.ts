// `clockhook types`: the types of the deliveries as they arrived, for the handler (docs/types.md).
import { type Command, Option } from 'commander';
import { counted } from '../counted.js';
import { readStore } from './capture-options.js';
import { writeOutputFile } from './output-file.js';
import { UsageError } from '../errors.js';

interface TypesFlags {
  format: 'ts' | 'json-schema';
  output?: string;
  db?: string;
}

async function writeTypes(flags: TypesFlags): Promise<void> {
  const { typeSources, typesJsonSchema, typesTs, withBody } = await import('../captures/index.js');
  const reading = await readStore(flags);
  // One after the other: a store of large bodies holds thousands of files, more than may be open at once.
  const captures = [];
  for (const capture of reading.captures) captures.push(await withBody(reading, capture));
  const sources = typeSources(captures);
  const derived = sources.filter((source) => source.captures > 0);
  const count = derived.reduce((sum, source) => sum + source.captures, 0);
  const header =
    derived.length === 0
      ? `Written by clockhook types with no deliveries captured in ${reading.path} yet: each type is shaped after the sandbox's sample. Write them again once deliveries arrived: npx clockhook types.`
      : `Written by clockhook types from ${counted(count, 'capture')} of ${counted(derived.length, 'event type')} in ${reading.path}; the other types are the sandbox's samples. Write them again as more arrive: npx clockhook types.`;
  const text =
    flags.format === 'ts' ? typesTs(sources, header) : `${JSON.stringify(typesJsonSchema(sources, header), null, 2)}\n`;
  if (!flags.output) return void process.stdout.write(text);
  await writeOutputFile(flags.output, text);
  console.error(
    `Wrote the types of ${counted(sources.length, 'event type')} to ${flags.output}: ${derived.length} from what was captured, the others from the sandbox's samples.`,
  );
}

/** `clockhook types`: TypeScript declarations or JSON Schema of every event type, from the captures. */
export function registerTypes(program: Command): void {
  program
    .command('types')
    .description("write types for your handler from the deliveries captured (the sandbox's samples for the rest)")
    .addOption(
      new Option('--format <format>', 'ts: TypeScript declarations; json-schema: JSON Schema')
        .choices(['ts', 'json-schema'])
        .default('ts'),
    )
    .option('-o, --output <file>', 'write to this file instead of stdout (e.g. src/webhook-events.ts)')
    .option('--db <file>', 'the capture store (default: $CLOCKHOOK_DB, else .clockhook/captures.json)')
    .option(
      '--check <file>',
      'exit 1 when the deliveries captured do not fit the types in this file, naming each field that moved',
    )
    .option('--scenario <file>', "with --check: a scenario's deliveries instead of the captured ones")
    .option('--json', 'with --check: { file, ok, checked, moved } for CI')
    .action(async (flags: TypesFlags & { check?: string; scenario?: string; json?: boolean }) => {
      if (flags.check === undefined) {
        if (flags.scenario !== undefined || flags.json)
          throw new UsageError(
            '--scenario and --json go with --check <file>: npx clockhook types --check src/webhook-events.ts',
          );
        return writeTypes(flags);
      }
      if (flags.output !== undefined)
        throw new UsageError('--check reads the types and -o writes them: give one of the two.');
      const { checkTypes } = await import('./types-check.js');
      return checkTypes({ ...flags, check: flags.check });
    });
}
