import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Command } from 'commander';
import { afterEach, describe, expect, it } from 'vitest';
import { ApiError } from '../../src/api/index.js';
import { TargetUnreachableError } from '../../src/check/battery.js';
import { reportError, run } from '../../src/cli/run.js';
import { ActionError, CliError, OptionError, UsageError } from '../../src/errors.js';
import { ConfigError } from '../../src/listen/config.js';
import { EndpointRecordsError, ForeignPathError, StoreLockedError } from '../../src/folder/index.js';
import { ListenUsageError } from '../../src/listen/options.js';
import { MissingFeatureError } from '../../src/optional.js';
import { KeyError, RelayRefusedError, RelayUnreachableError } from '../../src/relay/index.js';
import { SandboxError } from '../../src/sandbox/errors.js';
import { DiskFullError, StoreUnreadableError } from '../../src/store/index.js';

const SRC = new URL('../../src/', import.meta.url);

/** Every error class of src/, one of each, with the exit code it must mean. */
const ERRORS: [Error, 1 | 2][] = [
  [new UsageError('--port must be a port number'), 2],
  [new CliError('port 4300 is in use'), 1],
  [new OptionError('--faults: "x" is not a fault'), 2],
  [new ActionError('replay_failed', 'The replay was refused'), 1],
  [new ListenUsageError('--relay and --public-url both name the public URL'), 2],
  [new MissingFeatureError('redis'), 2],
  [new ConfigError('clockhook.config.json:4:3: not JSON'), 2],
  [new EndpointRecordsError('.clockhook/endpoints.json is not readable'), 1],
  [
    new ApiError({
      status: 404,
      type: 'invalid_request_error',
      code: 'resource_not_found',
      message: 'No such event',
      method: 'GET',
      url: 'http://api/event/x',
    }),
    1,
  ],
  [new SandboxError(400, 'invalid_request_error', 'parameter_invalid', 'url is required'), 1],
  [new KeyError('no key named alice'), 1],
  [new RelayUnreachableError('could not reach http://relay', 'ECONNREFUSED'), 1],
  [new RelayRefusedError('the access key is revoked'), 1],
  [new DiskFullError('/tmp/captures.json', Object.assign(new Error('no space'), { code: 'ENOSPC' })), 1],
  [new ForeignPathError('/tmp is a folder, not a file'), 2],
  [new StoreLockedError('/tmp/captures.json', 12345), 1],
  [new StoreUnreadableError('/tmp/captures.json is not a capture store'), 1],
  [new TargetUnreachableError('nothing answers at http://127.0.0.1:1/'), 1],
];

/** The CLI run with one command that throws `error`: its exit code and what it wrote on stderr. */
async function throughMain(error: unknown): Promise<{ code: number | undefined; stderr: string }> {
  const written: string[] = [];
  const write = process.stderr.write;
  process.stderr.write = ((text: string) => written.push(text) > 0) as typeof process.stderr.write;
  try {
    await run(['node', 'clockhook', 'fail'], () =>
      new Command('clockhook').exitOverride().addCommand(
        new Command('fail').action(() => {
          throw error;
        }),
      ),
    );
    return { code: process.exitCode as number | undefined, stderr: written.join('') };
  } finally {
    process.stderr.write = write;
  }
}

afterEach(() => {
  process.exitCode = undefined;
});

describe('errors and exit codes', () => {
  it('has every error class of src/ in this list, each stating its exit code', async () => {
    const files = (await readdir(SRC, { recursive: true })).filter((f) => f.endsWith('.ts'));
    const declared = new Set<string>();
    for (const file of files) {
      const text = await readFile(join(SRC.pathname, file), 'utf8');
      for (const match of text.matchAll(/class (\w+) extends (\w*Error)\b/g)) declared.add(match[1]);
    }
    declared.delete('ClockhookError');
    expect([...declared].sort()).toEqual(ERRORS.map(([e]) => e.constructor.name).sort());
    for (const [error, code] of ERRORS) expect((error as { exitCode?: number }).exitCode, error.name).toBe(code);
  });

  it.each(ERRORS.map(([error, code]) => [error.constructor.name, error, code] as const))(
    'a %s thrown through main exits with its code, in one line with no class name or stack',
    async (_name, error, code) => {
      const { code: exitCode, stderr } = await throughMain(error);
      expect(exitCode).toBe(code);
      expect(stderr).toMatch(/^clockhook: /);
      expect(stderr).not.toContain(error.constructor.name);
      expect(stderr).not.toMatch(/\n\s+at /);
    },
  );

  it('says a bug is one: exit 1, "please report", and the stack', async () => {
    const { code, stderr } = await throughMain(new TypeError("Cannot read properties of undefined (reading 'id')"));
    expect(code).toBe(1);
    expect(stderr).toContain('a bug in clockhook: please report it');
    expect(stderr).toMatch(/\n\s+at /);
  });

  it("exits 0 for commander's help and 2 for its usage errors", async () => {
    const program = () => {
      const root = new Command('clockhook').exitOverride().configureOutput({ writeOut: () => {}, writeErr: () => {} });
      root.command('fail').action(() => {});
      return root;
    };
    await run(['node', 'clockhook', 'fail', '--nope'], program);
    expect(process.exitCode).toBe(2);
    process.exitCode = undefined;
    await run(['node', 'clockhook', '--help'], program);
    expect(process.exitCode).toBe(0);
    expect(reportError(new Error('plain'), () => {})).toBe(1);
  });
});
