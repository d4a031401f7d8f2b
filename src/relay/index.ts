export { connectRelay, type RelayClient, type RelayClientOptions } from './client.js';
export { relayRecordFor } from './record.js';
export { RelayRefusedError, RelayUnreachableError } from './errors.js';
export { channelFor } from './protocol.js';
export { type RelayRequestLog, type RelayServer, type RelayServerOptions, startRelayServer } from './server.js';
export {
  addKey,
  FileKeyStore,
  KeyError,
  type KeyStore,
  type KeyUsage,
  type RelayKey,
  redisKeyStore,
  revokeKey,
} from './keys.js';
export { redact as redactedUrl } from './bus.js';
