import type { WithBody } from './whole.js';
import type { Capture } from '../store/index.js';
import { headersToSend } from './replay.js';

/** Quotes for a POSIX shell: everything inside single quotes, a quote as '\'' (as the page's Copy as curl). */
const quote = (text: string) => `'${text.replaceAll("'", "'\\''")}'`;

/**
 * The script's head: the secret from the environment, `sign` (the service's signature of the body file,
 * timestamped now: HMAC-SHA256 of "t.body" with openssl, which every shell has), and `send` (curl with the
 * body file; a status other than 2xx stops the script, saying which capture and what the app answered).
 */
const PROLOGUE = String.raw`set -euo pipefail
body=$(mktemp)
answer=$(mktemp)
trap 'rm -f "$body" "$answer"' EXIT

# The X-Service-Signature of the bytes in $body, made now, as the service signs a delivery.
sign() {
  local t
  t=$(date +%s)
  printf 't=%s,v1=%s' "$t" "$({ printf '%s.' "$t"; cat "$body"; } | openssl dgst -sha256 -hmac "$secret" | awk '{print $NF}')"
}

# send ID WHAT CURL-ARGS...: POSTs $body; stops the script unless the answer is a 2xx.
send() {
  local id=$1 what=$2 status
  shift 2
  status=$(curl -sS -o "$answer" -w '%{http_code}' "$@" --data-binary @"$body") || {
    printf '%s %s: not sent (curl failed); stopping here.\n' "$id" "$what" >&2
    exit 1
  }
  if [[ $status != 2?? ]]; then
    printf '%s %s: answered %s, not a 2xx; stopping here. The answer:\n' "$id" "$what" "$status" >&2
    cat "$answer" >&2
    echo >&2
    exit 1
  fi
  printf '%s %s: %s\n' "$id" "$what" "$status"
}
`;

const SECRET = String.raw`secret=${'$'}{WEBHOOK_SECRET:-${'$'}{CLOCKHOOK_SECRET:-}}
if [[ -z $secret ]]; then
  echo 'Set WEBHOOK_SECRET to the endpoint secret to sign with, e.g. export WEBHOOK_SECRET="$(npx clockhook secret)".' >&2
  exit 2
fi
`;

/** The lines that put a capture's bytes in $body: text as it is, other bytes through base64 -d. */
function bodyLines(body: Buffer): string {
  const text = body.toString('utf8');
  return Buffer.from(text, 'utf8').equals(body)
    ? `printf '%s' ${quote(text)} > "$body"`
    : `printf '%s' ${quote(body.toString('base64'))} | base64 -d > "$body"`;
}

/** One capture's lines: its bytes to $body, then `send` with its method, URL and headers. */
function captureLines(capture: Capture, body: Buffer, url: string, asIs: boolean): string {
  const what = `${capture.envelope?.type ?? capture.method}${capture.envelope ? ` ${capture.envelope.id}` : ''}`;
  const args = ['-X', capture.method, quote(new URL(capture.path, url).href)];
  const { 'x-service-signature': signature, ...headers } = headersToSend(capture);
  for (const [name, value] of Object.entries(headers))
    for (const one of Array.isArray(value) ? value : [value]) args.push('-H', quote(`${name}: ${one}`));
  if (asIs && signature !== undefined) args.push('-H', quote(`x-service-signature: ${String(signature)}`));
  if (!asIs) args.push('-H', '"x-service-signature: $(sign)"');
  return `# ${capture.id} ${what}\n${bodyLines(body)}\nsend ${quote(capture.id)} ${quote(what)} ${args.join(' ')}`;
}

/**
 * A bash script that sends the captures again, in order, to `listenerUrl` (or the Host each arrived at):
 * each re-signed when the script runs, with the secret in $WEBHOOK_SECRET (no export holds a secret), so a
 * receiver with a replay window takes it days later; `asIs` keeps the header each arrived with. The script
 * stops at the first answer that is not a 2xx, saying which capture and what came back.
 */
export function curlScript(captures: WithBody[], { to, asIs = false }: { to?: string; asIs?: boolean } = {}): string {
  const sends = captures.map(({ capture, body, missing }) =>
    missing
      ? `# ${capture.id}: not sent, its body is missing. ${missing.replace(/\n/g, ' ')}`
      : captureLines(capture, body, to ?? `http://${String(capture.headers.host ?? 'localhost')}/`, asIs),
  );
  const how = asIs ? 'with the signature each arrived with' : 'each re-signed now with $WEBHOOK_SECRET';
  return [
    '#!/usr/bin/env bash',
    `# clockhook captures export --format curl: ${captures.length} ${captures.length === 1 ? 'request' : 'requests'} sent again, ${how};`,
    '# the script stops at the first answer that is not a 2xx.',
    PROLOGUE,
    ...(asIs ? [] : [SECRET]),
    ...sends,
    '',
  ].join('\n');
}
