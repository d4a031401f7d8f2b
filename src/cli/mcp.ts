import type { Command } from 'commander';

/**
 * `clockhook mcp`: the Model Context Protocol server for a coding assistant, over stdio. The SDK is loaded
 * only here: the other commands start without it.
 */
export function registerMcp(program: Command): void {
  program
    .command('mcp')
    .description("serve clockhook's captures, replay, sandbox and check as tools for a coding assistant (MCP, stdio)")
    .option('--allow-writes', 'with an API key set, let the tools make the service act (redeliver, ping, trigger)')
    .action(async (flags: { allowWrites?: boolean }) => {
      const { runMcpServer } = await import('../mcp/index.js');
      await runMcpServer({ dir: process.cwd(), allowWrites: Boolean(flags.allowWrites), env: process.env });
    });
}
