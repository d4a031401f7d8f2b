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

/**
 * Group commit: every call made during one turn of the event loop shares one write, run once that
 * turn's I/O has been handled (setImmediate), and one at a time. A caller's promise resolves only
 * after a write that started after its call has completed.
 */
export function groupCommit(write: () => Promise<void>): () => Promise<void> {
  let waiting: { promise: Promise<void>; resolve: () => void; reject: (error: unknown) => void } | null = null;
  let scheduled = false;
  let writing = false;

  async function flush(): Promise<void> {
    scheduled = false;
    writing = true;
    const batch = waiting;
    waiting = null;
    try {
      await write();
      batch?.resolve();
    } catch (error) {
      batch?.reject(error);
    } finally {
      writing = false;
      if (waiting) schedule();
    }
  }

  function schedule(): void {
    if (scheduled || writing) return;
    scheduled = true;
    setImmediate(flush);
  }

  return function persist(): Promise<void> {
    if (!waiting) {
      let resolve: () => void = () => {};
      let reject: (error: unknown) => void = () => {};
      const promise = new Promise<void>((res, rej) => {
        resolve = res;
        reject = rej;
      });
      promise.catch(() => {}); // the callers handle it; an unawaited lazy write must not crash
      waiting = { promise, resolve, reject };
    }
    schedule();
    return waiting.promise;
  };
}
