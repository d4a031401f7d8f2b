// The WebSocket to clockhook: connects with the page's token, reconnects, sends actions and resolves their results.

import { token, $ } from './state.js';

let socket = null;
let retryMs = 500;
let nextId = 1;
export const pending = new Map();

/** listen says it is there every 2 s (a "beat"); without a word for this long, the page says it is not answering. */
const STALE_AFTER_MS = 5_000;
let heardAt = 0;
let answering = true;

/**
 * A frozen listen (SIGSTOP, a debugger's breakpoint) keeps its socket open and says nothing: checked each
 * second, it shows as not answering, and as live again with its next word.
 */
setInterval(() => {
  if (socket?.readyState !== WebSocket.OPEN || !answering || Date.now() - heardAt < STALE_AFTER_MS) return;
  answering = false;
  setConnection('stale', 'not answering');
}, 1_000);

function heard() {
  heardAt = Date.now();
  if (answering) return;
  answering = true;
  setConnection('open', 'live');
}

export function setConnection(kind, text) {
  const node = $('connection');
  node.className = `conn conn-${kind}`;
  node.textContent = text;
}

/**
 * Whether clockhook refuses the page's token (401), asked when the WebSocket could not open: the page
 * cannot read why a handshake failed. A listen that is away answers nothing, and is waited for.
 */
async function tokenRefused() {
  try {
    const res = await fetch(`/session?token=${encodeURIComponent(token)}`, { cache: 'no-store' });
    return res.status === 401;
  } catch {
    return false;
  }
}

/**
 * Connects, and again after each drop; each message goes to `receive`. A token clockhook refuses is said
 * once (`refused`), and not tried again: no reconnecting can mend it.
 */
export function connect(receive, refused) {
  if (!token) {
    refused('This page has no token.');
    return;
  }
  setConnection('connecting', 'connecting');
  socket = new WebSocket(`ws://${location.host}/ws?token=${encodeURIComponent(token)}`);
  let opened = false;
  socket.addEventListener('open', () => {
    opened = true;
    retryMs = 500;
    heardAt = Date.now();
    answering = true;
    setConnection('open', 'live');
  });
  socket.addEventListener('message', (event) => {
    heard();
    const message = JSON.parse(event.data);
    if (message.type !== 'beat') receive(message);
  });
  socket.addEventListener('close', () => {
    for (const [, resolve] of pending)
      resolve({
        ok: false,
        error: { code: 'disconnected', message: 'The connection to clockhook dropped; try again once it is back.' },
      });
    pending.clear();
    const wait = retryMs;
    retryMs = Math.min(retryMs * 2, 5000);
    const again = () => {
      setConnection('closed', `reconnecting in ${Math.round(wait / 100) / 10} s`);
      setTimeout(() => connect(receive, refused), wait);
    };
    if (opened) return again();
    tokenRefused().then((no) => (no ? refused("clockhook refused this page's token.") : again()));
  });
}

/** Sends an action and resolves with its result message. */
export function act(action) {
  return new Promise((resolve) => {
    if (!socket || socket.readyState !== WebSocket.OPEN) {
      resolve({ ok: false, error: { code: 'disconnected', message: 'Not connected to clockhook.' } });
      return;
    }
    const id = nextId++;
    pending.set(id, resolve);
    socket.send(JSON.stringify({ ...action, id }));
  });
}

/** Sends a message that has no result (asking for history); false when the connection is down. */
export function send(message) {
  if (socket?.readyState !== WebSocket.OPEN) return false;
  socket.send(JSON.stringify(message));
  return true;
}
