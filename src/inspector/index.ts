export type { ActionContext, InspectorMessage, PublicEndpoint } from './protocol.js';
export { type Inspector, startInspector } from './server.js';
export type { InspectorOptions } from './options.js';
