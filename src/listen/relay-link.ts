// A listen session's relay: the channel the folder used before (relay.json), and its public URL.
import { folderFiles, saveRelayRecord } from '../folder/index.js';
import type { Listener } from '../listener/index.js';
import { connectRelay, relayRecordFor } from '../relay/index.js';
import type { Setup } from './session.js';

/** Connects to the relay (with the token on file) and resolves with the channel's public URL. */
export async function startRelay(setup: Setup, relayUrl: string, listener: Listener): Promise<string> {
  const { config, logger, stateDir, cleanups, keeper } = setup;
  const relayPath = folderFiles(stateDir).relay;
  const record = await relayRecordFor(relayPath, relayUrl, logger);
  const told = config.onRelayEvent;
  const relay = connectRelay({
    relayUrl,
    token: record.token,
    relayKey: config.relayKey,
    handle: (request) => listener.handleDirect(request),
    logger,
    maxDisconnectedMs: config.relayMaxDisconnectedMs,
    onConnected: (url) => told({ state: 'connected', publicUrl: url }),
    onDisconnected: (reason) => told({ state: 'disconnected', reason }),
    onReplaced: (message) => told({ state: 'replaced', message }),
    onRefused: (message) => told({ state: 'refused', message }),
    onGiveUp: () => told({ state: 'gave-up' }),
  });
  cleanups.push(() => relay.close());
  const publicUrl = await relay.ready;
  const save = () => saveRelayRecord(relayPath, { ...record, publicUrl });
  await save();
  const unkeep = keeper.keep({ what: 'the relay channel (relay.json)', paths: [relayPath], write: save });
  cleanups.push(async () => unkeep());
  return publicUrl;
}
