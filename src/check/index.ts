export {
  type CheckOptions,
  type CheckReport,
  type CheckResult,
  type CheckStatus,
  DEFAULT_CHECK_EVENTS,
  runChecks,
  TargetUnreachableError,
} from './run.js';
