import { join } from 'node:path';
import { Listener, type ListenerOptions } from '../../src/listener/index.js';
import { CaptureStore } from '../../src/store/index.js';
import { startReceiver, type Responder } from './receiver.js';
import { tempDir } from './sandbox.js';

export interface ListenerRigOptions extends Omit<ListenerOptions, 'store' | 'routes'> {
  /** How the app answers. @default 200 {"ok":true} */
  respond?: Responder;
  /** Appended to the app's URL to make the forward target. @default '' */
  targetPath?: string;
}

/**
 * A `Listener` on port 0 with a store of its own in a temporary folder, forwarding to a receiver app
 * that records what it gets. `close` takes it all down again.
 */
export async function startListenerRig({ respond, targetPath = '', ...options }: ListenerRigOptions = {}) {
  const dir = await tempDir();
  const app = await startReceiver(respond);
  const store = await CaptureStore.open({ path: join(dir.path, 'captures.json') });
  const routes = [{ types: null, target: new URL(`${app.url}${targetPath}`) }];
  const listener = new Listener({ store, routes, port: 0, ...options });
  await listener.start();
  return {
    dir,
    app,
    store,
    listener,
    async close() {
      await listener.close(100);
      await store.close();
      await app.close();
      await dir.remove();
    },
  };
}

export type ListenerRig = Awaited<ReturnType<typeof startListenerRig>>;
