export type { McpContext } from './context.js';
export { createMcpServer, runMcpServer } from './server.js';
