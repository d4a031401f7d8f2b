// The package entry (`import … from 'clockhook'`): the fixed interface of DESIGN.md (signPayload,
// verifySignature, EVENT_TYPES, ApiClient, ApiError), with matchesSubscription and checkEnvelope added on
// purpose for receivers (docs/library.md lists every name, and a test holds the two to each other).
export { ApiClient, type ApiClientOptions, ApiError } from './api/index.js';
export {
  checkEnvelope,
  type ContractProblem,
  type DeliveryEnvelope,
  EVENT_TYPES,
  type EventType,
  matchesSubscription,
  type SignOptions,
  signPayload,
  type SignatureFailureReason,
  verifySignature,
  type VerifyOptions,
  type VerifyResult,
} from './contract/index.js';
