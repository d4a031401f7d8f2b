import { maskSecret } from '../contract/index.js';
import { shownUrl } from '../http/index.js';
import { isSignatureRefusal } from '../contract/index.js';
import { type Battery, makeBattery } from './battery.js';
import {
  checkDuplicate,
  checkEnvelopeVersion,
  checkForgeries,
  checkPing,
  checkRawBody,
  checkResponseTime,
  checkStaleTimestamp,
  checkValidDeliveries,
} from './checks.js';
import { type CheckOptions, type CheckReport, type CheckResult, DEFAULT_CHECK_EVENTS } from './types.js';

/** The checks that send correctly signed deliveries the app must take. */
const ACCEPTANCE_CHECKS = /^(valid:|raw-body$|duplicate$|envelope$|ping$)/;

/**
 * An app that refuses every correctly signed delivery with 400, 401 or 403 most likely verifies with
 * another secret than check signs with: the usual mistake, which would otherwise read as a list of
 * unrelated failures (raw body, api_version, ping), each with its own advice. Their hints then say the
 * one thing to fix.
 */
function diagnoseSecret(b: Battery, results: CheckResult[]): void {
  const refusals = b.signedAnswers.map((a) => (a.kind === 'answer' && isSignatureRefusal(a.status) ? a.status : null));
  if (refusals.length === 0 || refusals.includes(null)) return;
  const statuses = [...new Set(refusals)].join(', ');
  const hint = `The app refused every correctly signed delivery (${statuses}): it most likely verifies with another secret than ${maskSecret(b.options.secret)}, the one check signed with. Give check your app's secret (--secret), or give your app this one ("npx clockhook secret" prints the one clockhook listen registered in this folder).`;
  for (const result of results) {
    if (result.status === 'fail' && ACCEPTANCE_CHECKS.test(result.id)) result.hint = hint;
  }
}

/**
 * Sends a battery of signed and deliberately mis-signed deliveries to the developer's app and
 * reports, check by check, whether it honours the contract.
 */
export async function runChecks(options: CheckOptions): Promise<CheckReport> {
  const results: CheckResult[] = [];
  const battery = makeBattery(options, results);
  const events = options.events ?? DEFAULT_CHECK_EVENTS;
  await checkValidDeliveries(battery, events);
  await checkRawBody(battery, events[0] ?? 'punch.created');
  await checkForgeries(battery);
  await checkStaleTimestamp(battery);
  await checkDuplicate(battery);
  await checkEnvelopeVersion(battery);
  await checkPing(battery);
  checkResponseTime(battery);
  diagnoseSecret(battery, results);
  return { target: shownUrl(options.target), ok: results.every((r) => r.status !== 'fail'), checks: results };
}
