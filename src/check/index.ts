export { TargetUnreachableError } from './battery.js';
export { runChecks } from './run.js';
export {
  type CheckOptions,
  type CheckWords,
  CHECK_FLAG_WORDS,
  type CheckReport,
  type CheckResult,
  type CheckStatus,
  DEFAULT_CHECK_EVENTS,
} from './types.js';
