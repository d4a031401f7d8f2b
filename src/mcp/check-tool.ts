import { type McpServer, z } from './sdk.js';
import { type CheckWords, runChecks } from '../check/index.js';
import { isHttpUrl } from '../http/index.js';
import { endpointOnFile, type McpContext } from './context.js';
import { result } from './present.js';
import { checkResult } from './schemas.js';

const httpUrl = z
  .string()
  .max(2000)
  .refine(isHttpUrl, {
    message: 'give an http:// or https:// URL of the receiver, e.g. http://localhost:3000/webhooks',
  })
  .describe('the receiver, an http(s) URL: http://localhost:3000/webhooks');

/** How a hint names what to change: this tool's argument, and a command the user runs for what it does not take. */
const TOOL_WORDS: CheckWords = {
  target: (url) => `check_receiver with url ${url}`,
  dedupeProbe:
    'Run "npx clockhook check --forward-to <your app> --dedupe-probe <url>" (the probe answering GET <url>?id=<event id> with how many times the id was processed)',
};

/** `check_receiver`: clockhook check's battery against a URL, its table as data. */
export function registerCheckTool(server: McpServer, ctx: McpContext): void {
  server.registerTool(
    'check_receiver',
    {
      title: 'Check a receiver',
      description:
        "Runs clockhook check's battery against the app's webhook URL: signed deliveries of several types, forged and stale signatures, the raw body, a duplicate, a ping, the time to answer. Signs with the endpoint secret listen registered here (or $CLOCKHOOK_SECRET).",
      inputSchema: { url: httpUrl },
      outputSchema: {
        ok: z.boolean().describe('every check passed (a warning passes)'),
        checks: z.array(checkResult),
      },
      annotations: { readOnlyHint: false, destructiveHint: false, openWorldHint: false },
    },
    async ({ url }) => {
      const secret = ctx.env.CLOCKHOOK_SECRET || (await endpointOnFile(ctx)).secret;
      const report = await runChecks({ target: new URL(url), secret, words: TOOL_WORDS });
      const lines = report.checks.map(
        (c) => `${c.status.toUpperCase()} ${c.id}: sent ${c.sent}; got ${c.got}${c.hint ? `. ${c.hint}` : ''}`,
      );
      const verdict = report.ok ? 'The receiver passes.' : 'The receiver fails a check.';
      const checks = report.checks.map(({ id, name, status, sent, got, hint }) => ({
        ...{ id, name, status, sent, got },
        ...(hint ? { hint } : {}),
      }));
      return result(`${verdict}\n${lines.join('\n')}`, { ok: report.ok, checks });
    },
  );
}
