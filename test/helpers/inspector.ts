import { join } from 'node:path';
import WebSocket from 'ws';
import { type ListenOptions, startListen } from '../../src/listen/index.js';
import { startFixableApp } from './receiver.js';
import { tempDir } from './sandbox.js';

/**
 * listen in-process (embedded sandbox, inspector on port 0) with a receiver app, in a temp folder. The app
 * takes every delivery until a test sets `app.failing` (see startFixableApp).
 */
export async function startInspectedSession(options: Partial<ListenOptions> = {}) {
  const dir = await tempDir();
  const app = await startFixableApp();
  const session = await startListen({
    forwardTo: app.url,
    port: 0,
    sandboxPort: 0,
    inspectorPort: 0,
    stateDir: join(dir.path, '.clockhook'),
    ...options,
  });
  const inspectorUrl = new URL(session.ready.inspector as string);
  const token = inspectorUrl.searchParams.get('token') as string;
  return {
    dir: dir.path,
    app,
    session,
    inspectorUrl,
    token,
    wsUrl: `ws://${inspectorUrl.host}/ws?token=${token}`,
    async close() {
      await session.close();
      await app.close();
      await dir.remove();
    },
  };
}

type Message = any;

/** A WebSocket client that records every message and waits for the one it expects. */
export async function connectClient(url: string, headers: Record<string, string> = {}) {
  const socket = new WebSocket(url, { headers });
  const messages: Message[] = [];
  const raw: string[] = [];
  const listeners = new Set<() => void>();
  socket.on('message', (data) => {
    raw.push(String(data));
    messages.push(JSON.parse(String(data)));
    for (const listener of [...listeners]) listener();
  });
  await new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve());
    socket.once('unexpected-response', (_req, res) => reject(new Error(`HTTP ${res.statusCode}`)));
    socket.once('error', reject);
  });
  let nextId = 1;
  function waitFor(match: (m: Message) => boolean, timeoutMs = 10_000): Promise<Message> {
    return new Promise((resolve, reject) => {
      const check = () => {
        const found = messages.find(match);
        if (found) {
          listeners.delete(check);
          clearTimeout(timer);
          resolve(found);
        }
      };
      const timer = setTimeout(() => {
        listeners.delete(check);
        reject(new Error(`no matching message in ${timeoutMs} ms; got ${raw.join('\n').slice(0, 2000)}`));
      }, timeoutMs);
      listeners.add(check);
      check();
    });
  }
  return {
    socket,
    messages,
    raw,
    waitFor,
    /** Sends an action and resolves with its result. */
    act(action: Record<string, unknown>): Promise<Message> {
      const id = nextId++;
      socket.send(JSON.stringify({ ...action, id }));
      return waitFor((m) => m.type === 'result' && m.id === id);
    },
    close: () => socket.close(),
  };
}

/** The HTTP status a WebSocket handshake gets. */
export function handshakeStatus(url: string, headers: Record<string, string> = {}): Promise<number> {
  return new Promise((resolve) => {
    const socket = new WebSocket(url, { headers });
    socket.once('open', () => {
      socket.close();
      resolve(101);
    });
    socket.once('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
    socket.once('error', () => resolve(0));
  });
}
