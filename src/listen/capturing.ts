// The first step of a listen session: its capture store and its listener (held until the endpoint's secret is
// known), with tracing's exporter when it is on.
import { Listener } from '../listener/index.js';
import { CaptureStore } from '../store/index.js';
import { startTracing } from '../tracing/start.js';
import type { TracingConfig } from '../tracing/config.js';
import type { Setup } from './session.js';
import { refuseOwnAddress } from './targets.js';

/** Opens the store (kept by the folder's keeper) and starts the listener on its port, holding what arrives. */
export async function startCapturing(setup: Setup): Promise<{ store: CaptureStore; listener: Listener }> {
  const { config, logger, cleanups, keeper } = setup;
  const { dbPath: path, maxCaptures, now } = config;
  const store = await CaptureStore.open({ path, maxCaptures, logger, now, keeper });
  cleanups.push(() => store.close());
  // Pushed before the listener: it shuts down (exporting the last spans) once the listener has closed.
  const tracer = config.tracing ? await startTracer(config.tracing, setup) : null;
  const listener = new Listener({
    store,
    routes: config.targets.routes,
    ...{ port: config.port, host: config.host, path: config.path, secret: config.secret },
    ...{ skipVerify: config.skipVerify, tolerance: config.tolerance, timeoutMs: config.timeoutMs },
    waitForAppMs: config.waitForAppMs,
    onAppState: (event) => {
      for (const told of setup.appState) told(event);
    },
    faults: config.faults,
    filters: config.filters,
    tracer,
    ...{ maxBufferedBytes: config.maxBufferedBytes, now, logger, onDelivery: setup.onDelivery },
    // Until the endpoint and its secret are known (released in startListen).
    held: true,
  });
  await listener.start();
  cleanups.push(() => listener.close());
  await refuseOwnAddress(config.targets, { host: config.host, port: listener.port }, 'listener');
  return { store, listener };
}

/** Tracing's spans exporter, loaded only now (startTracing): with tracing off, nothing of OpenTelemetry is loaded. */
async function startTracer(tracing: TracingConfig, setup: Setup) {
  const tracer = await startTracing(tracing, (event) => setup.config.onTracing(event));
  setup.cleanups.push(() => tracer.shutdown());
  return tracer;
}
