import { randomBytes } from 'node:crypto';
import {
  checkEnvelope,
  type DeliveryEnvelope,
  sampleData,
  signPayload,
  LIMITS,
  API_VERSION,
} from '../contract/index.js';
import { type Answer, is2xx, redirectTo, postToReceiver } from './send.js';
import { CHECK_FLAG_WORDS, type CheckOptions, type CheckResult, type CheckWords } from './types.js';
import { CliError } from '../errors.js';

export const SLOW_WARN_MS = 10_000;
export const CONTRACT_LIMIT_MS = LIMITS.receiverTimeoutMs;

/** Thrown when nothing answers at the target: not a check result, the run cannot start. */
export class TargetUnreachableError extends CliError {
  override readonly name = 'TargetUnreachableError';
}

const eventId = () => `evt_check_${randomBytes(8).toString('hex')}`;

export interface Battery {
  options: CheckOptions & { apiVersion: string; timeoutMs: number; now: () => number; words: CheckWords };
  /** Sends one envelope, signed with the secret unless `header` says otherwise (null: no header). */
  deliver(env: DeliveryEnvelope, how?: { header?: string | null; body?: Buffer; timestamp?: number }): Promise<Answer>;
  record(result: CheckResult): void;
  envelope(type: string, data?: Record<string, unknown>, apiVersion?: string): DeliveryEnvelope;
  /** Every answer's duration so far, for the response-time check. */
  durations: number[];
  /** The answers to deliveries signed correctly and now, which the app should take. */
  signedAnswers: Answer[];
}

export function makeBattery(options: CheckOptions, results: CheckResult[]): Battery {
  const config = {
    ...options,
    apiVersion: options.apiVersion ?? API_VERSION,
    timeoutMs: options.timeoutMs ?? CONTRACT_LIMIT_MS,
    now: options.now ?? Date.now,
    words: options.words ?? CHECK_FLAG_WORDS,
  };
  const durations: number[] = [];
  const signedAnswers: Answer[] = [];
  return {
    options: config,
    durations,
    signedAnswers,
    envelope: (type, data, apiVersion = config.apiVersion) => ({
      id: eventId(),
      object: 'event',
      type,
      api_version: apiVersion,
      created: Math.floor(config.now() / 1000),
      data: data ?? sampleData(type),
    }),
    record(result) {
      results.push(result);
    },
    async deliver(env, { header, body, timestamp } = {}) {
      // Whatever a check breaks on purpose, the envelope itself is always the contract's.
      const problems = checkEnvelope(env);
      if (problems.length > 0)
        throw new Error(`clockhook check built a non-conforming envelope: ${JSON.stringify(problems)}`);
      const raw = body ?? Buffer.from(JSON.stringify(env));
      const headers: Record<string, string> = {
        'content-type': 'application/json',
        'user-agent': 'clockhook-check',
        'x-service-event': env.type,
      };
      const signature =
        header === undefined
          ? signPayload({
              payload: raw,
              secret: config.secret,
              timestamp: timestamp ?? Math.floor(config.now() / 1000),
            })
          : header;
      if (signature !== null) headers['x-service-signature'] = signature;
      const answer = await postToReceiver(config.target, { headers, body: raw }, config.timeoutMs);
      durations.push(answer.durationMs);
      if (header === undefined && timestamp === undefined) signedAnswers.push(answer);
      return answer;
    },
  };
}

/**
 * Pass on 2xx. A redirect fails with its own hint, whatever the check: the service follows none, so the
 * app must answer at the URL it is given (a trailing slash is the usual culprit). So does no answer at
 * all: the check's own advice (about raw bodies, say) would send the developer looking in the wrong place.
 */
export function acceptance(
  answer: Answer,
  hint: string,
  { target, words }: Pick<Battery['options'], 'target' | 'words'>,
) {
  if (is2xx(answer)) return { status: 'pass' as const };
  if (answer.kind === 'error' && answer.code === 'ECONNRESET') {
    return {
      status: 'fail' as const,
      hint: 'The app closed the connection without answering: it most likely crashed handling this delivery (see its log). Answer 2xx to every delivery whose signature verifies.',
    };
  }
  const location = redirectTo(answer);
  if (location && URL.canParse(location, target.href)) {
    const to = new URL(location, target).href;
    return {
      status: 'fail' as const,
      hint: `The app redirects to ${to}, and the service does not follow redirects: it counts every such delivery as failed. Register (and check) the URL the app answers at: ${words.target(to)}`,
    };
  }
  return { status: 'fail' as const, hint };
}
