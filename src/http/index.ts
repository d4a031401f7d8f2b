export { answerClientError, answerError, answerOnSocket, errorMessage } from './answers.js';
export { type BodyRead, readBody, type ReadBodyOptions } from './body.js';
export { copyHeaders, HOP_BY_HOP, type Headers, withoutHopByHop } from './headers.js';
export { hardenedServerOptions } from './server-options.js';
export { type BudgetLease, ByteBudget, leaseFrom } from './budget.js';
export { answerEarly, LINGER, type LingerLimits, lingerAfterAnswer } from './linger.js';
export { describeConnectionError, isCertificateError } from './connection-errors.js';
export { type PostOptions, postBytes } from './post.js';
export {
  BAD_PORT_WHY,
  badPortProblem,
  closeNow,
  isBadPort,
  isEveryInterface,
  listenOn,
  onPortOrFree,
} from './ports.js';
export { isHttpUrl, shownUrl } from './urls.js';
export { sendInTurn } from './ws-send.js';
