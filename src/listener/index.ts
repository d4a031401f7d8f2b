export { Listener } from './listener.js';
export type { Delivered } from './direct.js';
export { type DeliveryReport, type ListenerOptions, MAX_BODY_BYTES } from './options.js';
export { reportOf } from './report.js';
export type { DirectAnswer, DirectRequest } from './direct.js';
export type { ReplayRequest, ReplayResult } from './replay.js';
export { isListenerItself, normalizeBasePath, normalizeForwardTarget, pathUnderBase } from './target.js';
export {
  chooseRoute,
  type ForwardRoute,
  isRouted,
  parseRoute,
  type RouteOption,
  routeSpecOf,
  routeTakes,
  type RouteSpec,
} from './routes.js';
export { type AppStateEvent, DEFAULT_WAIT_FOR_APP_MS, SERVICE_LIMIT_SECONDS } from './app-wait.js';
export { faultsText, parseFaults, type FaultSpec } from './faults.js';
export type { FaultsOption } from './injector.js';
