export { Listener } from './listener.js';
export type { Delivered } from './direct.js';
export { type DeliveryReport, type ListenerOptions, MAX_BODY_BYTES } from './options.js';
export type { DirectAnswer, DirectRequest } from './direct.js';
export type { ReplayRequest, ReplayResult } from './replay.js';
export { isListenerItself, normalizeBasePath, normalizeForwardTarget, pathUnderBase } from './target.js';
export { chooseRoute, parseRoute, routeTakes, type RouteSpec } from './routes.js';
