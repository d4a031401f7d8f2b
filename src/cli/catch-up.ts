import { createInterface } from 'node:readline/promises';
import { catchUp, findMissed, type ListenSession, missedSummary } from '../listen/index.js';
import type { WebhookEndpoint } from '../contract/index.js';
import { colour, printLine, writeLine } from './output.js';

/**
 * After the ready line: the events that came while listen was off and did not reach its endpoint, said in
 * one line (`--json`: a `missed` line each), and with `catchUp`, redelivered now. Only for an endpoint that
 * existed before this run: a new one cannot have missed anything.
 */
export async function reportMissed(
  session: ListenSession,
  { json, catchUp: redeliver, yes }: { json: boolean; catchUp: boolean; yes: boolean },
): Promise<void> {
  const { client, endpoint } = session;
  if (!session.endpointExisted || !client || !endpoint || endpoint.status === 'deleted') return;
  const captured = new Set(session.store.all().flatMap((c) => (c.envelope ? [c.envelope.id] : [])));
  const missed = await findMissed({ client, endpoint, captured, timeScale: session.timeScale });
  // With --json, stdout holds only NDJSON: what is said for people goes to stderr.
  const say = (line: string) => (json ? process.stderr.write(`clockhook: ${line}\n`) : writeLine(line));
  if (json) for (const m of missed) printLine({ event: 'missed', ...m });
  if (missed.length === 0) return;
  if (!json) writeLine(colour.yellow(missedSummary(missed)));
  if (!redeliver) return;
  const confirm = async (others: WebhookEndpoint[]) => {
    const names = others.map((o) => `${o.id} (${o.url})`).join(', ');
    const question = `A redelivery goes to every enabled endpoint subscribed to the event: also ${names}.`;
    if (yes) return true;
    if (!process.stdin.isTTY) {
      say(`${question} Not redelivered: pass --yes to go on.`);
      return false;
    }
    const prompt = createInterface({ input: process.stdin, output: process.stderr });
    const answer = await prompt.question(`${question} Redeliver ${missed.length} events? [y/N] `);
    prompt.close();
    return /^y(es)?$/i.test(answer.trim());
  };
  await catchUp({ client, endpoint, missed, confirm, say });
}
