export {
  answerClientError,
  type DeliveryReport,
  Listener,
  MAX_BODY_BYTES,
  type ListenerOptions,
  ReplayError,
  type ReplayRequest,
  type ReplayResult,
} from './listener.js';
export type { DirectAnswer, DirectRequest } from './direct.js';
export { answerExcerpt, textExcerpt, withoutHopByHop } from './forward.js';
export { normalizeBasePath, normalizeForwardTarget } from './target.js';
export {
  type ListenMode,
  type ListenOptions,
  type ListenSession,
  ListenUsageError,
  type ReadyInfo,
  type RelayEvent,
  startListen,
} from './session.js';
export {
  EndpointRecordsError,
  type EndpointRecordOnFile,
  forgetEndpointRecords,
  isSandboxBase,
  readEndpointRecords,
  sameBase,
} from './endpoint.js';
