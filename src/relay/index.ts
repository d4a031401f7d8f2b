export {
  connectRelay,
  loadRelayRecord,
  type RelayClient,
  type RelayClientOptions,
  type RelayRecord,
  RelayUnreachableError,
  saveRelayRecord,
} from './client.js';
export { channelFor } from './protocol.js';
export { type RelayRequestLog, type RelayServer, type RelayServerOptions, startRelayServer } from './server.js';
