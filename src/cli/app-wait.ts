// listen's --wait-for-app: how long a delivery is held for an app that is not answering (restarting), and what
// listen says when the app goes down and comes back.
import type { Command } from 'commander';
import { type AppStateEvent, SERVICE_LIMIT_SECONDS } from '../listener/app-wait.js';
import { LISTEN_DEFAULTS } from '../listen/defaults.js';
import { UsageError } from '../errors.js';
import { PAINT, printLine, writeLine } from './output.js';

export interface AppWaitFlags {
  waitForApp: string;
}

/** `--wait-for-app <seconds>` in ms: 0 turns it off; the service's 30 s limit is its bound. */
export function waitForAppMs(value: string): number {
  const seconds = Number(value);
  if (value.trim() === '' || !Number.isFinite(seconds) || seconds < 0)
    throw new UsageError(`--wait-for-app must be a number of seconds, 0 to turn it off (got ${value}).`);
  if (seconds >= SERVICE_LIMIT_SECONDS)
    throw new UsageError(
      `--wait-for-app ${value}: the service gives a delivery ${SERVICE_LIMIT_SECONDS} s, and counts it failed after that; wait less (${LISTEN_DEFAULTS.waitForAppMs / 1000} s by default), so that the app still has time to answer.`,
    );
  return Math.round(seconds * 1000);
}

/** What listen says when the app stops answering and when it is back: one line each, for people or as JSON. */
export function sayAppState(event: AppStateEvent, json: boolean): void {
  if (json) return printLine({ event: 'app', ...event });
  const where = event.target.replace(/^https?:\/\/(127\.0\.0\.1|localhost)/, '');
  if (event.state === 'down')
    writeLine(
      PAINT.warn(
        `app not answering on ${where}: holding deliveries for up to ${event.waitMs / 1000} s (--wait-for-app)`,
      ),
    );
  else writeLine(PAINT.ok(`app back after ${Math.round(event.downMs / 100) / 10} s: ${event.delivered} delivered`));
}

/** The flag, after --timeout in listen's help. */
export function withWaitForApp(command: Command): Command {
  return command.option(
    '--wait-for-app <seconds>',
    'hold deliveries this long for an app that is not answering (restarting); 0: off',
    String(LISTEN_DEFAULTS.waitForAppMs / 1000),
  );
}
