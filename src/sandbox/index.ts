export { type Sandbox, type SandboxOptions, startSandbox } from './server.js';
export { PLANS, SCOPES } from './state.js';
export type { AttemptReport, SetTimer } from './worker.js';
