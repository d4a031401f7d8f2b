const SKIP = new Set([
  'host',
  'content-length',
  'connection',
  'keep-alive',
  'transfer-encoding',
  'te',
  'upgrade',
  'accept-encoding',
]);

/** Quotes for a POSIX shell: everything inside single quotes, a quote as '\'' . */
export function shellQuote(text) {
  return `'${String(text).replaceAll("'", "'\\''")}'`;
}

/**
 * The capture as a curl command aimed at the listener, so it goes through clockhook again.
 * Bodies that are not UTF-8 are piped in through base64 -d, byte for byte.
 */
export function curlCommand(capture, listenerUrl) {
  const url = new URL(capture.path, listenerUrl).href;
  const parts = ['curl', '-X', capture.method, shellQuote(url)];
  for (const [name, value] of Object.entries(capture.headers)) {
    if (SKIP.has(name)) continue;
    for (const one of Array.isArray(value) ? value : [value]) parts.push('-H', shellQuote(`${name}: ${one}`));
  }
  if (capture.bodyEncoding === 'base64')
    return `echo ${shellQuote(capture.body)} | base64 -d | ${parts.join(' ')} --data-binary @-`;
  // curl reads a --data-binary value that begins with @ as a file name: such a body goes in on stdin.
  if (capture.body.startsWith('@'))
    return `printf '%s' ${shellQuote(capture.body)} | ${parts.join(' ')} --data-binary @-`;
  parts.push('--data-binary', shellQuote(capture.body));
  return parts.join(' ');
}
