// listen's ready lines for people: where it listens, where deliveries go, the API, the endpoint, the secret
// (masked unless asked) and the page.
import { networkInterfaces } from 'node:os';
import type { ReadyInfo } from '../listen/index.js';
import { isEveryInterface } from '../http/index.js';
import { maskSecret, PAINT } from './output.js';

/**
 * The secret's line: masked unless asked; whether the app can keep it, as the endpoint stays for the next
 * run; how to see it whole without stopping this run, when it is on file.
 */
function secretText(
  secret: string,
  printSecret: boolean,
  { kept, printedBy }: { kept: boolean; printedBy: string | null },
): string {
  const notes = [
    ...(kept ? ['the same on the next run'] : []),
    ...(printSecret ? [] : [printedBy ? `${printedBy} prints it` : '--print-secret to show it']),
  ];
  return `${printSecret ? secret : maskSecret(secret)}${notes.length > 0 ? ` (${notes.join('; ')})` : ''}`;
}

/**
 * With --host 0.0.0.0 (or ::), the listener's URL as other machines reach it, one per address of this
 * machine's network interfaces (as Vite's "Network" line): the ready line's own is 127.0.0.1's.
 * IPv6 ones only for ::, and not link-local ones, which need a zone to be reached.
 */
export function networkUrls(
  listenerUrl: string,
  host: string,
  interfaces: ReturnType<typeof networkInterfaces> = networkInterfaces(),
): string[] {
  if (!isEveryInterface(host)) return [];
  const addresses = Object.values(interfaces).flatMap((entries) => entries ?? []);
  return addresses
    .filter((a) => !a.internal && (a.family === 'IPv4' || (host === '::' && !a.address.startsWith('fe80:'))))
    .map((a) => {
      const url = new URL(listenerUrl);
      url.hostname = a.family === 'IPv6' ? `[${a.address}]` : a.address;
      return url.href;
    });
}

/**
 * Why there is no API (a secret given without an API key: deliveries come some other way), and how to have the
 * sandbox: a secret from the environment is easily set for something else (replays) and forgotten.
 */
function offlineWords(secretFrom: string): string {
  return `none (offline: ${secretFrom} gives the secret, so no sandbox is started and trigger has nothing to ask; without it, listen starts one)`;
}

export function printReady(
  ready: ReadyInfo,
  secret: string | null,
  printSecret: boolean,
  secretNotes: { kept: boolean; printedBy: string | null },
  { mode, host, secretFrom }: { mode: string; host: string; secretFrom: string },
): void {
  const network = networkUrls(ready.listener, host);
  const lines = [
    PAINT.info('clockhook listen is ready'),
    `  Listening   ${ready.listener}`,
    ...(network.length > 0 ? [`  Network     ${network.join(', ')}`] : []),
    ...(ready.routes
      ? ready.routes.map((route, i) => `  ${i === 0 ? 'Routes    ' : '          '}  ${route}`)
      : [
          `  Forwarding  ${ready.forwardTo ?? 'nowhere: capture-only mode, clockhook answers 200 itself (use --forward-to <port|url>)'}`,
        ]),
    `  API         ${ready.apiBase ? `${ready.apiBase}${ready.sandbox ? ' (sandbox)' : ''}` : offlineWords(secretFrom)}`,
  ];
  if (ready.endpointId !== null)
    lines.push(`  Endpoint    ${ready.endpointId}${ready.publicUrl ? ` for ${ready.publicUrl}` : ''}`);
  lines.push(
    `  Secret      ${secret ? secretText(secret, printSecret, secretNotes) : 'unknown: signatures are not checked'}`,
  );
  if (ready.inspector) lines.push(`  Inspector   ${ready.inspector}`);
  if (mode === 'sandbox')
    lines.push('', `Send a test delivery from another terminal: ${PAINT.info('npx clockhook trigger punch.created')}`);
  console.log(lines.join('\n'));
}
