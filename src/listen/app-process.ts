// `listen -- <command…>`: the developer's app, started by listen once it is ready, with the secret and the forward
// target in its environment, its output passed through, and stopped with listen (the signal passed on to its whole
// process group, then killed after a grace time). An app that exits on its own is said; listen keeps capturing,
// and holds deliveries for it as for any app that is down (--wait-for-app).
import { type ChildProcess, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';

export interface AppProcessOptions {
  /** The command as words (run as they are, without a shell), or one line for the shell (the config file's). */
  command: readonly string[] | string;
  env: Record<string, string>;
  /** Each line the app writes, and where. */
  onLine: (line: string, stream: 'stdout' | 'stderr') => void;
  /** The app exited on its own (not stopped by listen): what to say of it. */
  onExit: (said: string) => void;
  /** How long a stop waits after the signal before it kills the app. @default 5000 */
  graceMs?: number;
}

/** The command as it is shown: its words joined, quoted where a word has a space. */
export function commandText(command: readonly string[] | string): string {
  if (typeof command === 'string') return command;
  return command.map((word) => (/[\s'"]/.test(word) ? JSON.stringify(word) : word)).join(' ');
}

export class AppProcess {
  readonly #options: AppProcessOptions;
  #child: ChildProcess | null = null;
  #stopping = false;
  #exited: Promise<void> = Promise.resolve();

  constructor(options: AppProcessOptions) {
    this.#options = options;
  }

  get pid(): number | undefined {
    return this.#child?.pid;
  }

  /** Starts the app in a process group of its own (so that a stop reaches what it starts: npm, a watcher). */
  start(): void {
    const { command, env } = this.#options;
    const [file, args, shell] =
      typeof command === 'string' ? [command, [], true] : [command[0], command.slice(1), false];
    const child = spawn(file, args, {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
      shell,
    });
    this.#child = child;
    for (const stream of ['stdout', 'stderr'] as const)
      createInterface({ input: child[stream] }).on('line', (line) => this.#options.onLine(line, stream));
    this.#exited = new Promise((resolve) => {
      // Said once: a command that cannot start may be told as an error and then as an exit.
      let said = false;
      const end = (words: string) => {
        if (!said && !this.#stopping) this.#options.onExit(words);
        said = true;
        resolve();
      };
      child.once('error', (error) => end(`${commandText(command)} could not start: ${error.message}`));
      child.once('exit', (code, signal) =>
        end(`${commandText(command)} exited ${signal ? `on ${signal}` : `with code ${code}`}`),
      );
    });
  }

  /** Stops the app: `signal` to its process group, then SIGKILL after the grace time. Safe to call twice. */
  async stop(signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
    const child = this.#child;
    if (!child?.pid) return;
    this.#stopping = true;
    const send = (sig: NodeJS.Signals) => {
      try {
        process.kill(-(child.pid as number), sig);
      } catch {
        if (child.exitCode === null && child.signalCode === null) child.kill(sig); // no group: the child alone
      }
    };
    send(signal); // what the app started lives on in its group after it exited: that is stopped too
    if (child.exitCode !== null || child.signalCode !== null) return;
    const timer = setTimeout(() => send('SIGKILL'), this.#options.graceMs ?? 5_000);
    await this.#exited;
    clearTimeout(timer);
  }
}
