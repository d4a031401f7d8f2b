export type { ActionContext, InspectorMessage, PublicEndpoint } from './protocol.js';
export { type Inspector, type InspectorOptions, startInspector } from './server.js';
