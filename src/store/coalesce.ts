/**
 * Serializes an async write: at most one runs, and calls made meanwhile share one follow-up run that
 * picks up every change made before it starts. So many changes cost one write, and a caller's
 * promise resolves only after a write that started after its call has completed.
 */
export function coalesceWrites(write: () => Promise<void>): () => Promise<void> {
  let running: Promise<void> | null = null;
  let queued: Promise<void> | null = null;
  return function persist(): Promise<void> {
    if (queued) return queued;
    if (!running) {
      running = write().finally(() => {
        running = null;
      });
      return running;
    }
    queued = running
      .catch(() => {})
      .then((): Promise<void> => {
        queued = null;
        return persist();
      });
    return queued;
  };
}
