import { randomBytes } from 'node:crypto';
import { readRelayRecords, type RelayRecord } from '../folder/index.js';
import type { Logger } from '../logger.js';
import { channelFor } from './protocol.js';

/**
 * The channel token made for this relay earlier (`.clockhook/relay.json`), or a new one (256 random bits).
 * The channel is always derived from the token, the one that counts.
 */
export async function relayRecordFor(path: string, relayUrl: string, logger?: Logger): Promise<RelayRecord> {
  const relay = relayUrl.replace(/\/+$/, '');
  const known = (await readRelayRecords(path, logger)).find((record) => record.relay === relay);
  const token = known?.token ?? randomBytes(32).toString('base64url');
  return { relay, token, channel: channelFor(token), publicUrl: known?.publicUrl ?? '' };
}
