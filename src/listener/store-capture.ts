import type { Capture, CaptureStore } from '../store/index.js';

/**
 * Step "store": the capture is written and fsynced before anything is sent on, so that a delivery that reached
 * the listener is never lost, whatever the forward does. For a large body, only its beginning stays in memory
 * (`bytes`, the raw body, goes to a file of its own). Resolves with the capture as stored, and the failure
 * when it could not be made durable (the sender is then told 503, and the app never gets it).
 */
export async function storeCapture(
  store: CaptureStore,
  capture: Capture,
  bytes: Buffer,
): Promise<{ stored: Capture; failure: Error | null }> {
  const { durable, capture: stored } = store.insert(capture, bytes);
  try {
    await durable;
    return { stored, failure: null };
  } catch (error) {
    return { stored, failure: error as Error };
  }
}
