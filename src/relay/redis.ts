// The relay's connection to Redis, loaded only by a relay on Redis.
import { loadFeature } from '../optional.js';
/**
 * A Redis connection that fails commands at once while Redis is away (no offline queue). With `reconnect`,
 * it reconnects for ever once it has been connected; before that it gives up after a few tries, so that a
 * relay pointed at a Redis that is not there says so at start instead of waiting. The client is loaded here,
 * by a relay on Redis only: every other command of the CLI starts without it.
 */
export async function redisClient(url: string, reconnect: boolean) {
  const { createClient } = await loadFeature('redis', () => import('@redis/client'));
  let connected = false;
  const reconnectStrategy = (retries: number, cause: Error) => {
    if (!connected && retries >= 3) return cause;
    return Math.min(100 * 2 ** retries, 2000) * (0.5 + Math.random() / 2);
  };
  const client = createClient({
    url,
    disableOfflineQueue: true,
    socket: { reconnectStrategy: reconnect ? reconnectStrategy : false, connectTimeout: 3000 },
  });
  client.once('ready', () => {
    connected = true;
  });
  return client;
}

/** A connection to Redis (see redisClient). */
export type Redis = Awaited<ReturnType<typeof redisClient>>;
