export { answerClientError, answerError, answerOnSocket, errorMessage } from './answers.js';
export { type BodyRead, readBody, type ReadBodyOptions } from './body.js';
export { copyHeaders, HOP_BY_HOP, type Headers, withoutHopByHop } from './headers.js';
export { hardenedServerOptions } from './server-options.js';
export { type BudgetLease, ByteBudget, leaseFrom } from './budget.js';
export { answerEarly, LINGER, type LingerLimits, lingerAfterAnswer } from './linger.js';
