import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { BIN, cleanEnv } from './cli.js';

type Json = Record<string, any>;

/**
 * A real `clockhook mcp` in `dir` over stdio, driven by the SDK's own client; `stderr` is what it wrote there, `pid`
 * its process. `nodeArgs` go to node itself.
 */
export async function startMcp(
  dir: string,
  { env = {}, args = [], nodeArgs = [] }: { env?: Record<string, string>; args?: string[]; nodeArgs?: string[] } = {},
) {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [...nodeArgs, BIN, 'mcp', ...args],
    cwd: dir,
    env: cleanEnv(env) as Record<string, string>,
    stderr: 'pipe',
  });
  const stderr: string[] = [];
  transport.stderr?.on('data', (chunk: Buffer) => stderr.push(String(chunk)));
  const client = new Client({ name: 'clockhook-test', version: '1.0.0' });
  await client.connect(transport);
  // The client checks each result against its tool's output schema once it has listed the tools.
  const { tools } = await client.listTools();
  /** Every result and error read, as JSON: what a test looks for secrets in. */
  const written: string[] = [JSON.stringify(tools)];
  /** Calls a tool: its structured content, its text, and whether it is an error. */
  async function call(name: string, args: Json = {}) {
    const res = (await client.callTool({ name, arguments: args })) as Json;
    written.push(JSON.stringify(res));
    return { data: res.structuredContent as Json, text: res.content?.[0]?.text as string, error: Boolean(res.isError) };
  }
  return { client, tools, call, stderr, written, pid: transport.pid as number, close: () => client.close() };
}
export type McpUnderTest = Awaited<ReturnType<typeof startMcp>>;
