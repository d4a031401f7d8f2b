import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { runChecks } from '../check/index.js';
import { endpointOnFile, type McpContext } from './context.js';
import { result } from './present.js';

/** `check_receiver`: clockhook check's battery against a URL, its table as data. */
export function registerCheckTool(server: McpServer, ctx: McpContext): void {
  server.registerTool(
    'check_receiver',
    {
      title: 'Check a receiver',
      description:
        "Runs clockhook check's battery against the app's webhook URL: signed deliveries of several types, forged and stale signatures, the raw body, a duplicate, a ping, the time to answer. Signs with the endpoint secret listen registered here (or $CLOCKHOOK_SECRET).",
      inputSchema: { url: z.string().url().describe('the receiver, e.g. http://localhost:3000/webhooks') },
      outputSchema: {
        ok: z.boolean(),
        checks: z.array(z.looseObject({ id: z.string(), status: z.string() })),
      },
      annotations: { readOnlyHint: false, destructiveHint: false, openWorldHint: false },
    },
    async ({ url }) => {
      const secret = ctx.env.CLOCKHOOK_SECRET || (await endpointOnFile(ctx)).secret;
      const report = await runChecks({ target: new URL(url), secret });
      const lines = report.checks.map((c) => `${c.status.toUpperCase()} ${c.id}${c.hint ? `: ${c.hint}` : ''}`);
      return result(`${report.ok ? 'The receiver passes.' : 'The receiver fails a check.'}\n${lines.join('\n')}`, {
        ok: report.ok,
        checks: report.checks,
      });
    },
  );
}
