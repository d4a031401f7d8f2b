// The sandbox's own calls, beside the service's API (which has no way to emit an event on request): one client
// that `trigger`, the MCP tools and the testing library share, so that an event is emitted one way.
import type { EventRecord } from '../contract/index.js';
import type { ApiClient } from './client.js';

/** The calls only a sandbox answers, through an API client made for it. */
export class SandboxClient {
  constructor(readonly api: ApiClient) {}

  /** Emits an event of `type` with `data` (none: its sample data; the sandbox delivers it to the subscribed endpoints); its record. */
  emit(type: string, data?: unknown): Promise<EventRecord> {
    return this.api.request<EventRecord>('POST', '/sandbox/events', { body: { type, data } });
  }

  /**
   * Whether the API at `apiBase` is a sandbox: only a sandbox answers /sandbox/health (the real service emits
   * events only from real actions). False when it cannot be asked within `timeoutMs`.
   */
  static async answersAt(apiBase: string, { timeoutMs = 5000, fetch = globalThis.fetch } = {}): Promise<boolean> {
    try {
      const response = await fetch(`${apiBase}/sandbox/health`, { signal: AbortSignal.timeout(timeoutMs) });
      return response.ok && ((await response.json()) as { ok?: boolean }).ok === true;
    } catch {
      return false;
    }
  }
}
