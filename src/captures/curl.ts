import { type Capture, encodeBody } from '../store/index.js';

type CurlCommand = (
  capture: Pick<Capture, 'method' | 'path' | 'headers' | 'body' | 'bodyEncoding'>,
  url: string,
) => string;

/** The page's own "Copy as curl" (ui/curl.js), so that both give the same command. */
async function pageCurl(): Promise<CurlCommand> {
  const module = (await import(new URL('../../ui/curl.js', import.meta.url).href)) as { curlCommand: CurlCommand };
  return module.curlCommand;
}

/**
 * A shell script of one curl command per capture, sending its bytes and headers (the signature header it
 * arrived with) to `listenerUrl`, or to the Host each arrived at.
 */
export async function curlScript(
  captures: { capture: Capture; body: Buffer }[],
  listenerUrl?: string,
): Promise<string> {
  const curlCommand = await pageCurl();
  const commands = captures.map(({ capture, body }) => {
    const url = listenerUrl ?? `http://${String(capture.headers.host ?? 'localhost')}/`;
    return `# ${capture.id} ${capture.envelope?.type ?? capture.method} ${capture.envelope?.id ?? ''}\n${curlCommand({ ...capture, ...encodeBody(body) }, url)}`;
  });
  return `#!/usr/bin/env bash\n# clockhook captures export --format curl\nset -e\n${commands.join('\n')}\n`;
}
