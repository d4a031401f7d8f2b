import type { Command } from 'commander';
import { type CaptureFilter, parseSince } from '../captures/select.js';
import { type Outcome, OUTCOMES } from '../story/index.js';
import { isDomainEventType, PING_EVENT_TYPE, unknownTypeWords } from '../contract/index.js';
import type { Capture } from '../store/index.js';
import { readCaptureStore, type StoreReading } from '../store/read-only.js';
import { UsageError } from '../errors.js';
import { fromEnv, parsePositiveInt } from './process.js';
import { folderFiles } from '../folder/index.js';

/** The flags that pick captures, shared by `captures list|export` and `replay`. */
export interface CaptureFlags {
  db?: string;
  type?: string;
  status?: string;
  filtered?: boolean;
  since?: string;
  limit?: string;
  json?: boolean;
}

export function withCaptureFilters(command: Command, { status = true } = {}): Command {
  command
    .option('--db <file>', 'the capture store (default: $CLOCKHOOK_DB, else .clockhook/captures.json)')
    .option('--type <type>', 'only captures of this event type')
    .option('--since <when>', 'only captures since 10m, 2h, 1d ago, or an ISO time (2026-11-25T10:00Z)');
  if (status) command.option('--filtered', 'only captures a --filter of listen kept from the app');
  if (status)
    command.option(
      '--status <status>',
      `${OUTCOMES.join(', ')}: failed is each event whose newest delivery failed, with no replay taken since (as replay --failed and the inspector's Failed filter); 2xx and rejected, what each capture got`,
    );
  return command;
}

/** The filter the flags say; every value given wrong is exit 2 with what to give instead. */
export function filterOf(flags: CaptureFlags, ids: string[] = [], now = Date.now()): CaptureFilter {
  const filter: CaptureFilter = {};
  for (const id of ids) {
    if (!/^cap_[0-9a-z]+$/.test(id))
      throw new UsageError(
        `${JSON.stringify(id)} is not a capture id: they look like cap_0mwwi3hqg0007ups (npx clockhook captures list).`,
      );
  }
  if (ids.length > 0) filter.ids = ids;
  if (flags.type !== undefined) {
    if (flags.type !== PING_EVENT_TYPE && !isDomainEventType(flags.type))
      throw new UsageError(`--type: ${unknownTypeWords(flags.type)}.`);
    filter.type = flags.type;
  }
  if (flags.status !== undefined) {
    if (!(OUTCOMES as readonly string[]).includes(flags.status))
      throw new UsageError(`--status ${flags.status}: give ${OUTCOMES.join(', ')}.`);
    filter.status = flags.status as Outcome;
  }
  if (flags.filtered) filter.filtered = true;
  if (flags.since !== undefined) {
    const since = parseSince(flags.since, now);
    if (since === null)
      throw new UsageError(`--since ${flags.since}: give 30s, 10m, 2h, 1d, or an ISO time such as 2026-11-25T10:00Z.`);
    filter.since = since;
  }
  if (flags.limit !== undefined) filter.limit = parsePositiveInt(flags.limit, '--limit');
  return filter;
}

export const storePathOf = (flags: CaptureFlags) => flags.db ?? fromEnv('CLOCKHOOK_DB') ?? folderFiles().captures;

/** The store, read as it is now (listen may be writing it). */
export async function readStore(flags: CaptureFlags): Promise<StoreReading> {
  return readCaptureStore(storePathOf(flags));
}

/** The captures the ids name, each found, or exit 2 naming the first that is not and where to look. */
export function namedCaptures(reading: StoreReading, ids: string[]): Capture[] {
  const byId = new Map(reading.captures.map((c) => [c.id, c]));
  const missing = ids.find((id) => !byId.has(id));
  if (missing !== undefined) {
    throw new UsageError(
      `no capture ${missing} in ${reading.path} (cleared, rotated out by --max-captures, or in another --db). See the ones there: npx clockhook captures list`,
    );
  }
  return ids.map((id) => byId.get(id) as Capture);
}
