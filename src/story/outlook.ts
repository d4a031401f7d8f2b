// What the service does next with an event, in words, the same on every surface: `events get`, the page's
// attempts and missed list, listen's catch-up line and the MCP tools. The attempts limit and the retry delays
// are the contract's (LIMITS); a surface only puts the time where `{at}` stands, in its own way.
import type { DeliveryOutlook, MissedEvent, MissedOutlook } from '../api/index.js';
import { durationWords, LIMITS } from '../contract/index.js';
import { counted } from '../counted.js';
import { attemptOf, GIVEN_UP, inTime, nextWords } from './words.js';

/**
 * What comes next, as words: `{at}` stands where a surface puts the time the next attempt is due (the
 * terminal as UTC, the page as local time); `due`, when given, is said instead once that time has passed.
 */
export interface OutlookWords {
  text: string;
  due?: string;
}

/** Why an endpoint is disabled when the service disabled it. */
export const DISABLES_AFTER = `the service disables an endpoint after ${LIMITS.consecutiveFailuresToDisable} failed deliveries in a row`;

/** Why the service sends an endpoint that is not enabled nothing, and what to do; null for an enabled one. */
export function endpointProblem(endpoint: { id: number; status: string }): string | null {
  if (endpoint.status === 'enabled') return null;
  if (endpoint.status === 'deleted')
    return `Endpoint #${endpoint.id} was deleted: the service sends nothing here any more. Restart clockhook listen to register a new one (its secret is new).`;
  const why = endpoint.status === 'disabled' ? ` (${DISABLES_AFTER})` : '';
  return `Endpoint #${endpoint.id} is ${endpoint.status}: the service sends it nothing${why}.`;
}

/**
 * What comes next for one endpoint whose latest attempt failed (see deliveryOutlook); `timeScale`, a sandbox's
 * --time-scale, said with the policy when it is not 1.
 */
export function outlookWords(o: DeliveryOutlook, { timeScale = 1 }: { timeScale?: number } = {}): OutlookWords {
  const endpoint = `Endpoint ${o.endpointId}`;
  if (o.next === 'none') {
    if (o.reason === 'deleted') return { text: `${endpoint} no longer exists: nothing more is sent to it.` };
    if (o.reason === 'disabled')
      return {
        text: `${endpoint} is disabled, and a disabled endpoint is excluded from deliveries: no more attempts come while it is.`,
      };
    return { text: `${endpoint}: ${GIVEN_UP}.` };
  }
  const scaled = timeScale === 1 ? '' : `, times the sandbox's --time-scale ${timeScale}`;
  const policy = `${durationWords(o.delayMs)} after attempt ${o.after} (the service's retry policy${scaled})`;
  const next = `${endpoint}: ${attemptOf(o.attempt)}`;
  if (o.dueAt === null) return { text: `${next} comes ${policy}.` };
  return {
    text: `${next} is due at about {at}, ${policy}.`,
    due: `${next} was due at about {at}, ${policy}; it shows here once it completes.`,
  };
}

/** What the service does next with an event this listen missed, in a few words for its line of the list. */
export function missedWords(o: MissedOutlook): OutlookWords {
  if (o.next === 'none') {
    return { text: o.reason === 'gave-up' ? GIVEN_UP : 'not sent while the endpoint is disabled' };
  }
  if (o.attempt === 1) return { text: 'its first attempt is still to come' };
  const dueAt = 'dueAt' in o ? o.dueAt : null;
  return { text: nextWords({ attempt: o.attempt, dueAt }, { at: () => '{at}' }) };
}

/** The words of `outlook` with the time put in: `at` formats it; `now` decides between before and after. */
export function sayOutlook(words: OutlookWords, dueAt: number | null, now: number, at: (ms: number) => string): string {
  const text = dueAt !== null && dueAt <= now && words.due ? words.due : words.text;
  return dueAt === null ? text : text.replace('{at}', at(dueAt));
}

/**
 * One line for people of what came while listen was off: how many, what the service will do with them, and
 * how to get them now: `hint` names the command that works where the line is read (none once they are
 * being redelivered).
 */
export function missedSummary(
  missed: MissedEvent[],
  { now = Date.now(), hint }: { now?: number; hint?: string } = {},
): string {
  const retried = missed.filter((m) => m.outlook.next === 'attempt');
  const gaveUp = missed.filter((m) => m.outlook.next === 'none' && m.outlook.reason === 'gave-up');
  const disabled = missed.filter((m) => m.outlook.next === 'none' && m.outlook.reason === 'disabled');
  const due = retried
    .map((m) => ('dueAt' in m.outlook ? m.outlook.dueAt : null))
    .filter((at): at is number => at !== null)
    .sort((a, b) => a - b)[0];
  const next = due === undefined ? '' : `, the next ${inTime(due, now)}`;
  const parts = [
    ...(retried.length > 0 ? [`${retried.length} will be retried by the service${next}`] : []),
    ...(gaveUp.length > 0
      ? [`${gaveUp.length} ${gaveUp.length === 1 ? 'is' : 'are'} not sent again (${GIVEN_UP})`]
      : []),
    ...(disabled.length > 0 ? [`${disabled.length} will not come while the endpoint is disabled`] : []),
  ];
  const count = `${counted(missed.length, 'event')} came while listen was off`;
  return `${count}: ${parts.join('; ')}.${hint ? ` Get them now: ${hint}` : ''}`;
}
