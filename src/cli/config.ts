import { join } from 'node:path';
import type { Command } from 'commander';
import { checkConfig, CONFIG_FILE, type ListenConfigFile, readConfigFile, startingConfig } from '../listen/config.js';
import { collect, parsePort } from './process.js';
import { CliError } from '../errors.js';
import { writeOutputFile } from './output-file.js';
import type { RouteOption } from '../listener/routes.js';

/** The flags a config key stands for, and how its value becomes the flag's. */
const FLAG_OF: Record<keyof ListenConfigFile, { flag: string; value: (v: never) => unknown }> = {
  port: { flag: 'port', value: (v: number) => String(v) },
  path: { flag: 'path', value: (v: string) => v },
  forwardTo: { flag: 'forwardTo', value: (v: RouteOption[]) => v },
  filter: { flag: 'filter', value: (v: string[]) => v },
  command: { flag: 'command', value: (v: string) => v },
  events: { flag: 'events', value: (v: string[]) => v.join(',') },
  inspectorPort: { flag: 'inspectorPort', value: (v: number) => String(v) },
  sandboxPort: { flag: 'sandboxPort', value: (v: number) => String(v) },
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
    .option('--forward-to <target>', 'your app, as listen takes it (repeat for routes) (default: 3000)', collect)
    .option('--port <port>', "listen's port (default: 4300)")
    .action(async (flags: { forwardTo?: string[]; port?: string }) => {
      const text = startingConfig({
        ...(flags.forwardTo ? { forwardTo: flags.forwardTo } : {}),
        ...(flags.port === undefined ? {} : { port: parsePort(flags.port, '--port') }),
      });
      checkConfig(JSON.parse(text), CONFIG_FILE); // a bad route is refused now, not when listen reads the file
      // 'wx' refuses a file that is there already, in the same step as the write.
      await writeOutputFile(CONFIG_FILE, text, { named: join(process.cwd(), CONFIG_FILE), flag: 'wx' }).catch(
        (error: NodeJS.ErrnoException) => {
          if (error.code !== 'EEXIST') throw error;
          throw new CliError(
            `${CONFIG_FILE} exists already; it is left as it is. Edit it, or delete it and run init again.`,
          );
        },
      );
      console.log(`Wrote ${CONFIG_FILE}: npx clockhook listen reads it (a flag on the command line wins over it).`);
      console.log(
        'Secrets and API keys do not go in it: they come from the environment ($CLOCKHOOK_SECRET, $CLOCKHOOK_API_KEY) or .clockhook/.',
      );
    });
}
