// listen's part in `listen -- <command…>`: the app's environment (the secret, its port, listen's URL), its output
// with a prefix, and its exit said on the terminal and the page (src/listen/app-process.ts runs it).
import { AppProcess, commandText } from '../listen/app-process.js';
import { startExecTarget } from '../listen/exec-target.js';
import { UsageError } from '../errors.js';
import type { ListenSession } from '../listen/index.js';
import { PAINT, printLine } from './output.js';

/** The environment the app gets: the secret (as `secretEnv`), PORT when it is forwarded to a local port, listen's URL. */
export function appEnvironment(session: ListenSession, secretEnv: string): Record<string, string> {
  const env: Record<string, string> = { CLOCKHOOK_LISTEN_URL: session.ready.listener };
  if (session.secret) env[secretEnv] = session.secret;
  const target = session.ready.forwardTo && !session.ready.routes ? new URL(session.ready.forwardTo) : null;
  if (target && ['localhost', '127.0.0.1', '[::1]'].includes(target.hostname))
    env.PORT = target.port || (target.protocol === 'https:' ? '443' : '80');
  return env;
}

/** Starts the app once listen is ready; the caller stops it when listen stops. */
export function startApp(
  session: ListenSession,
  command: readonly string[] | string,
  { secretEnv, json }: { secretEnv: string; json: boolean },
): AppProcess {
  const env = appEnvironment(session, secretEnv);
  const prefix = PAINT.plain('app │ ');
  const app = new AppProcess({
    command,
    env,
    // With --json, stdout is NDJSON: the app's lines go to stderr.
    onLine: (line, stream) =>
      (json || stream === 'stderr' ? process.stderr : process.stdout).write(`${prefix}${line}\n`),
    onExit: (said) => {
      const target = session.ready.forwardTo ?? 'the app';
      const waitMs = session.listener.waitForAppMs;
      if (json) printLine({ event: 'app', state: 'exited', said });
      else
        console.log(
          PAINT.warn(
            `${said}. listen keeps capturing: a delivery waits up to ${waitMs / 1000} s for the app, then gets 502. Start it again yourself, or restart listen.`,
          ),
        );
      session.inspector?.showApp({ state: 'down', target, waitMs, exited: said });
    },
  });
  app.start();
  const names = Object.keys(env).map((name) => (name === 'PORT' ? `PORT=${env.PORT}` : name));
  const pid = app.pid === undefined ? '' : ` (pid ${app.pid})`;
  const started = `Started ${commandText(command)}${pid} with ${names.join(', ')}`;
  if (json) printLine({ event: 'app', state: 'started', pid: app.pid ?? null, env: Object.keys(env) });
  else console.log(PAINT.info(started));
  return app;
}

/**
 * `--exec <command>`: the server that runs it once per delivery (listen forwards there), started before listen;
 * `attach` gives it the session's secret and the attempt each delivery is, once listen has them.
 */
export async function startExec(flags: { exec?: string; timeout: string }, routesGiven: boolean) {
  if (routesGiven)
    throw new UsageError('--exec runs a command as the app, and --forward-to names an app: give one of the two.');
  const env: Record<string, string> = {};
  let attemptOf: (eventId: string | null) => string = () => '1';
  const prefix = PAINT.plain('exec │ ');
  const target = await startExecTarget({
    command: flags.exec as string,
    env,
    timeoutMs: Number(flags.timeout),
    attemptOf: (eventId) => attemptOf(eventId),
    onLine: (line) => process.stderr.write(`${prefix}${line}\n`),
  });
  return {
    url: target.url,
    close: () => target.close(),
    attach(session: ListenSession, secretEnv: string) {
      if (session.secret) env[secretEnv] = session.secret;
      // The newest capture of the event is the one being run: listen stores it before it forwards it.
      attemptOf = (eventId) => {
        const capture = session.store.newest(100).find((c) => c.envelope?.id === eventId);
        if (!capture) return '1';
        return capture.source === 'replay' ? 'replay' : String((capture.retry ?? 0) + 1);
      };
      console.error(PAINT.info(`Each delivery runs ${flags.exec} (its body on stdin; exit 0 answers 200, else 500).`));
    },
  };
}
