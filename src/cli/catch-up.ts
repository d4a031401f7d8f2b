import { createInterface } from 'node:readline/promises';
import type { ListenSession } from '../listen/index.js';
import { missedSummary } from '../story/index.js';
import type { ApiClient } from '../api/index.js';
import type { WebhookEndpoint } from '../contract/index.js';
import { endpointRecordOnFile } from './secret.js';
import { PAINT, printLine, writeLine } from './output.js';
import { STATE_DIR } from '../folder/index.js';

/**
 * Asks before a redelivery that reaches other endpoints too: yes with `--yes`, a question at a terminal,
 * and no (saying why) without one.
 */
export function confirmOthers({ yes, say, count }: { yes: boolean; say: (line: string) => void; count: number }) {
  return async (_others: WebhookEndpoint[], reach: string): Promise<boolean> => {
    const question = `A redelivery goes to every enabled endpoint subscribed to its event: ${reach}.`;
    if (yes) return true;
    if (!process.stdin.isTTY) {
      say(`${question} Not redelivered: pass --yes to go on.`);
      return false;
    }
    const prompt = createInterface({ input: process.stdin, output: process.stderr });
    const answer = await prompt.question(`${question} Redeliver ${count} events? [y/N] `);
    prompt.close();
    return /^y(es)?$/i.test(answer.trim());
  };
}

/** How to get the missed events now while listen runs: its store is locked, so from another terminal. */
export const WHILE_LISTEN_RUNS = 'npx clockhook events redeliver --missed (from another terminal)';

/**
 * After the ready line: the events that came while listen was off and did not reach its endpoint, said in
 * one line (`--json`: a `missed` line each), and with `catchUp`, redelivered now. Only for an endpoint that
 * existed before this run: a new one cannot have missed anything.
 */
export async function reportMissed(
  session: ListenSession,
  { json, catchUp: redeliver, yes }: { json: boolean; catchUp: boolean; yes: boolean },
): Promise<void> {
  const missed = await session.findMissed();
  // With --json, stdout holds only NDJSON: what is said for people goes to stderr.
  const say = (line: string) => (json ? process.stderr.write(`clockhook: ${line}\n`) : writeLine(line));
  if (json) for (const m of missed) printLine({ event: 'missed', ...m });
  if (missed.length === 0) return;
  // Once they are being redelivered, no hint to get them; while listen runs, its store is locked, and the
  // command that works from another terminal is `events redeliver --missed`.
  const hint = redeliver ? undefined : WHILE_LISTEN_RUNS;
  if (!json) writeLine(PAINT.warn(missedSummary(missed, { hint })));
  if (redeliver) await session.catchUp(confirmOthers({ yes, say, count: missed.length }), say);
}

/**
 * `events redeliver --missed`: what listen's endpoint in this folder missed while listen was off, redelivered
 * now from another terminal, as `listen --catch-up` does.
 */
export async function redeliverMissed(
  client: ApiClient,
  {
    endpointId,
    yes,
    json,
    timeScale,
  }: { endpointId: string | undefined; yes: boolean; json: boolean; timeScale: number },
): Promise<void> {
  const record = await endpointRecordOnFile(endpointId);
  const endpoint = await client.getEndpoint(record.id);
  // listen's library, loaded by the commands that use it (a CLI start loads every command: see docs/performance-notes.md).
  const { catchUp, findMissedHere } = await import('../listen/index.js');
  const missed = await findMissedHere({ client, endpoint, stateDir: STATE_DIR, timeScale });
  const say = (line: string) => (json ? process.stderr.write(`clockhook: ${line}\n`) : console.log(line));
  if (missed.length === 0) {
    say(`Endpoint ${endpoint.id} missed nothing: every event since the newest listen captured reached it.`);
    return;
  }
  say(missedSummary(missed));
  const result = await catchUp({
    client,
    endpoint,
    missed,
    confirm: confirmOthers({ yes, say, count: missed.length }),
    say,
  });
  if (json) printLine({ redelivered: result.redelivered, reenabled: result.reenabled });
}
