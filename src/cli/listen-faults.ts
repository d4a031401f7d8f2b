// listen's faults on purpose (--faults, --faults-seed: docs/faults.md), and what it says of them in its ready
// line and at exit.
import { randomInt } from 'node:crypto';
import type { Command } from 'commander';
import type { FaultsOption } from '../listener/index.js';
import { parseFaults } from '../listener/faults.js';
import { UsageError } from '../errors.js';
import { PAINT } from './output.js';

export interface FaultFlags {
  faults?: string;
  faultsSeed?: string;
}

/** `--faults <spec>` with `--faults-seed <n>` (a random one when not given, printed so that a run can be repeated). */
export function faultsOption(flags: FaultFlags): FaultsOption | null {
  if (flags.faults === undefined) {
    if (flags.faultsSeed !== undefined)
      throw new UsageError('--faults-seed repeats the faults of --faults: give both.');
    return null;
  }
  const spec = parseFaults(flags.faults);
  const seed = flags.faultsSeed === undefined ? randomInt(2 ** 31) : Number(flags.faultsSeed);
  if (!Number.isInteger(seed) || seed < 0 || seed > 4_294_967_295)
    throw new UsageError(`--faults-seed must be a whole number from 0 to 4294967295 (got ${flags.faultsSeed}).`);
  return { spec, seed };
}

/** The faults line after the ready line, for people. */
export function faultsReadyLine(faults: { spec: string; seed: number }, lead = 'Injecting faults'): string {
  return PAINT.warn(
    `${lead}: ${faults.spec} (seed ${faults.seed}: --faults-seed ${faults.seed} repeats them). See docs/faults.md.`,
  );
}

/** The flags, in listen's help. */
export function withFaults(command: Command): Command {
  return command
    .option(
      '--faults <spec>',
      'inject faults to test your handler: duplicate=10%,delay=100-500,reorder=200,fail=5%,timeout=1%',
    )
    .option('--faults-seed <n>', 'repeat the faults of an earlier run (its ready line says its seed)');
}
