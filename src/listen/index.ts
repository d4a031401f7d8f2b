export { chooseEndpoint, type EndpointChoice, type EndpointChoiceInput } from './endpoint-choice.js';
export { isSandboxBase, sameBase } from './endpoint-records.js';
export { DELETED, EndpointWatch } from './endpoint-watch.js';
export { LISTEN_DEFAULTS } from './defaults.js';
export { type ListenConfig, listenConfig, type ListenOptions, ListenUsageError } from './options.js';
export type { ListenMode, ListenSession, ReadyInfo, RelayEvent } from './session.js';
export { registerEndpoint, releaseEndpoint } from './register.js';
export { startListen } from './start.js';
export {
  CONFIG_FILE,
  ConfigError,
  checkConfig,
  LISTEN_KEYS,
  type ListenConfigFile,
  readConfigFile,
  startingConfig,
} from './config.js';
export { catchUp, findMissed, findMissedHere, reachText, redeliveryReach } from './catch-up.js';
// The missed line's words are the story's; listen's terminal says them (cli/catch-up.ts).
export { missedSummary } from '../story/index.js';
