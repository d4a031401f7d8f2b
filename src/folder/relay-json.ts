// `.clockhook/relay.json`: the channel token of each relay this folder used, so a restart gets the same public URL.
import type { Logger } from '../logger.js';
import { readJsonFile, writePrivateFile } from './private-files.js';

/** A relay's channel token, made by listen, so a restart gets the same public URL. */
export interface RelayRecord {
  relay: string;
  channel: string;
  token: string;
  publicUrl: string;
}

/**
 * `.clockhook/relay.json`: the record of the relay used last, as DESIGN.md has it, and under `earlier`
 * those of the other relays this folder has used, most recent first, so going back to one gets its public
 * URL back (and the endpoint kept for it) instead of a new one.
 */
interface RelayFile extends RelayRecord {
  earlier?: RelayRecord[];
}

const isRelayRecord = (value: unknown): value is RelayRecord => {
  const r = value as Partial<RelayRecord> | null;
  return (
    typeof r === 'object' &&
    r !== null &&
    typeof r.relay === 'string' &&
    typeof r.token === 'string' &&
    typeof r.channel === 'string'
  );
};

const isRelayFile = (value: unknown): value is RelayFile => {
  const earlier = (value as Partial<RelayFile> | null)?.earlier;
  return isRelayRecord(value) && (earlier === undefined || (Array.isArray(earlier) && earlier.every(isRelayRecord)));
};

/** The records of a file read: the relay used last first; `channel` as filed (the token is the one that counts). */
const recordsIn = (file: RelayFile): RelayRecord[] =>
  [file, ...(file.earlier ?? [])].map(({ relay, token, channel, publicUrl }) => ({
    relay,
    token,
    channel,
    publicUrl: typeof publicUrl === 'string' ? publicUrl : '',
  }));

/**
 * The records on file, the relay used last first; none when there is no file. A file that cannot be read (a
 * hand edit gone wrong) is moved aside with a warning, never overwritten: its tokens are the only way back
 * to the public URLs they name.
 */
export async function readRelayRecords(path: string, logger?: Logger): Promise<RelayRecord[]> {
  const read = await readJsonFile(path, isRelayFile);
  if (read.status === 'corrupt') {
    logger?.warn(
      `${path} could not be read (${read.reason}); moved it to ${read.movedTo}. This run gets a new channel, so a new public URL: the token in that file keeps the old one if you mend it.`,
    );
  }
  return read.status === 'ok' ? recordsIn(read.data) : [];
}

/**
 * Writes `record` as the relay used last (0600), and keeps the other relays' records as the file has them
 * now (read again here, so a listen of this folder on another relay meanwhile loses nothing).
 */
export async function saveRelayRecord(path: string, record: RelayRecord): Promise<void> {
  const earlier = (await readRelayRecords(path)).filter((other) => other.relay !== record.relay);
  const file: RelayFile = earlier.length > 0 ? { ...record, earlier } : record;
  await writePrivateFile(path, `${JSON.stringify(file, null, 2)}\n`);
}
