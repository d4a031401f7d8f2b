/** Why the relay refused a connection or a request, the `cause` label of `clockhook_relay_refusals_total`. */
export const REFUSAL_CAUSES = ['descriptors', 'channels', 'buffer', 'in-flight', 'key-channels', 'redis'] as const;
export type RefusalCause = (typeof REFUSAL_CAUSES)[number];

/** How a request to a channel URL ended, the `outcome` label of `clockhook_relay_requests_total`. */
export type RequestOutcome = 'relayed' | '404' | '413' | '429' | '503' | '504';

/**
 * The relay's metrics for `GET /metrics` (Prometheus text format), in a registry of its own so that
 * several relays in one process (tests) do not share counts. No label carries a channel id: the
 * channel URLs are the only secret a sender needs. prom-client is loaded here, by a relay only: every other
 * command of the CLI starts without it.
 */
export async function relayMetrics(gauges: { channels: () => number; inFlight: () => number }) {
  const { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } = await import('prom-client');
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'clockhook_relay_' });
  /** A counter by one label, each of `values` shown from the start (at 0). */
  const counted = <L extends string>(name: string, help: string, label: L, values: readonly string[]) => {
    const counter = new Counter({ name, help, labelNames: [label] as const, registers: [registry] });
    for (const value of values) counter.labels(value).inc(0);
    return counter;
  };
  const requests = counted(
    'clockhook_relay_requests_total',
    'Requests to channel URLs, by outcome: relayed (the listener answered), or the status the relay gave.',
    'outcome',
    ['relayed', '404', '413', '429', '503', '504'] satisfies RequestOutcome[],
  );
  const refusals = counted(
    'clockhook_relay_refusals_total',
    'Connections and requests the relay refused, by cause: descriptors (near the open-file limit), channels (--max-channels), buffer (--max-buffer), in-flight (a channel or key has its most), key-channels (--key-max-channels), redis (Redis away).',
    'cause',
    REFUSAL_CAUSES,
  );
  return {
    registry,
    requests,
    answerSeconds: new Histogram({
      name: 'clockhook_relay_answer_seconds',
      help: 'Time from a request to its answer, in seconds.',
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers: [registry],
    }),
    refusals,
    ...gaugesOf(Gauge, registry, gauges),
    redisRoundTrips: new Counter({
      name: 'clockhook_relay_redis_round_trips_total',
      help: 'Commands sent to Redis.',
      registers: [registry],
    }),
    redisErrors: new Counter({
      name: 'clockhook_relay_redis_errors_total',
      help: 'Commands to Redis that failed.',
      registers: [registry],
    }),
  };
}

export type RelayMetrics = Awaited<ReturnType<typeof relayMetrics>>;

type Prom = typeof import('prom-client');

/** The gauges: channels and requests in flight as they are when scraped, and the heartbeat's lag. */
function gaugesOf(
  Gauge: Prom['Gauge'],
  registry: InstanceType<Prom['Registry']>,
  gauges: { channels: () => number; inFlight: () => number },
) {
  return {
    channels: new Gauge({
      name: 'clockhook_relay_channels',
      help: 'Channels whose listener is connected to this instance.',
      registers: [registry],
      collect() {
        this.set(gauges.channels());
      },
    }),
    inFlight: new Gauge({
      name: 'clockhook_relay_requests_in_flight',
      help: 'Requests this instance is answering now.',
      registers: [registry],
      collect() {
        this.set(gauges.inFlight());
      },
    }),
    heartbeatLag: new Gauge({
      name: 'clockhook_relay_heartbeat_lag_seconds',
      help: 'How late the latest heartbeat tick ran: the event loop was held that long.',
      registers: [registry],
    }),
  };
}

/** The outcome label of a status the sender got. */
export function requestOutcomeOf(status: number, relayed: boolean): RequestOutcome {
  if (relayed) return 'relayed';
  const known: RequestOutcome[] = ['404', '413', '429', '503', '504'];
  return known.find((outcome) => outcome === String(status)) ?? '503';
}
