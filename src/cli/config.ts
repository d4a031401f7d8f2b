import { writeFile } from 'node:fs/promises';
import type { Command } from 'commander';
import { CONFIG_FILE, type ListenConfigFile, readConfigFile, STARTING_CONFIG } from '../listen/config.js';
import { CliError } from '../errors.js';

/** The flags a config key stands for, and how its value becomes the flag's. */
const FLAG_OF: Record<keyof ListenConfigFile, { flag: string; value: (v: never) => unknown }> = {
  port: { flag: 'port', value: (v: number) => String(v) },
  path: { flag: 'path', value: (v: string) => v },
  forwardTo: { flag: 'forwardTo', value: (v: string[]) => v },
  events: { flag: 'events', value: (v: string[]) => v.join(',') },
  inspectorPort: { flag: 'inspectorPort', value: (v: number) => String(v) },
  maxCaptures: { flag: 'maxCaptures', value: (v: number) => String(v) },
  timeout: { flag: 'timeout', value: (v: number) => String(v) },
  tolerance: { flag: 'tolerance', value: (v: number) => String(v) },
  db: { flag: 'db', value: (v: string) => v },
  relay: { flag: 'relay', value: (v: string) => v },
  publicUrl: { flag: 'publicUrl', value: (v: string) => v },
  waitForApp: { flag: 'waitForApp', value: (v: number) => String(v) },
  faults: { flag: 'faults', value: (v: string) => v },
  faultsSeed: { flag: 'faultsSeed', value: (v: number) => String(v) },
};

/**
 * Puts the settings of `clockhook.config.json` (or `--config <file>`) under the flags: a flag given on the
 * command line wins. Resolves with the file used, or null when there is none.
 */
export async function applyConfigFile(command: Command, flags: Record<string, unknown>): Promise<string | null> {
  const file = (flags.config as string | undefined) ?? CONFIG_FILE;
  const config = await readConfigFile(file, { optional: flags.config === undefined });
  if (!config) return null;
  for (const [key, value] of Object.entries(config) as [keyof ListenConfigFile, never][]) {
    const { flag, value: asFlag } = FLAG_OF[key];
    if (command.getOptionValueSource(flag) === 'cli') continue;
    flags[flag] = asFlag(value);
  }
  return file;
}

/** `clockhook init`: writes a starting clockhook.config.json, never over one. */
export function registerInit(program: Command): void {
  program
    .command('init')
    .description(`write a starting ${CONFIG_FILE} for this project (listen reads it)`)
    .action(async () => {
      // 'wx' refuses a file that is there already, in the same step as the write.
      await writeFile(CONFIG_FILE, STARTING_CONFIG, { flag: 'wx' }).catch((error: NodeJS.ErrnoException) => {
        if (error.code !== 'EEXIST')
          throw new CliError(
            `cannot write ${CONFIG_FILE} in ${process.cwd()} (${error.code ?? error.message}): run init in your project's folder, one you can write to.`,
          );
        throw new CliError(
          `${CONFIG_FILE} exists already; it is left as it is. Edit it, or delete it and run init again.`,
        );
      });
      console.log(`Wrote ${CONFIG_FILE}: npx clockhook listen reads it (a flag on the command line wins over it).`);
      console.log(
        'Secrets and API keys do not go in it: they come from the environment ($CLOCKHOOK_SECRET, $CLOCKHOOK_API_KEY) or .clockhook/.',
      );
    });
}
