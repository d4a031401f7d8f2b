// The parts of the MCP SDK and of zod that `clockhook mcp` uses, and the only place src/mcp imports them from. The
// build bundles this file (scripts/bundle-mcp.mjs), so that an install brings neither the SDK's HTTP transports
// (express, hono, cors, jose, …) nor the whole of zod: both are dev dependencies.
export { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
export { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
export { z } from 'zod';
