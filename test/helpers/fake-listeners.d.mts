import type WebSocket from 'ws';

export interface FakeListener {
  ws: WebSocket;
  publicUrl: string;
  channel: string;
  /** Requests it answered. */
  answered: number;
}

export function connectFakeListener(relayUrl: string): Promise<FakeListener>;
export function connectFakeListeners(
  relayUrls: string | string[],
  count: number,
  options?: { batch?: number },
): Promise<{ listeners: FakeListener[]; close(): void }>;
