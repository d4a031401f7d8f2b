import { describe, expect, it } from 'vitest';
import { isBadPort } from '../../src/http/index.js';

/** Whether Node's own fetch refuses `port` before connecting. 192.0.2.1 (TEST-NET-1) is no one's: on any other port the fetch only fails to connect, or times out. */
async function fetchRefuses(port: number): Promise<boolean> {
  return fetch(`http://192.0.2.1:${port}/`, { signal: AbortSignal.timeout(500) }).then(
    () => false,
    (error: Error & { cause?: { message?: string } }) => error.cause?.message === 'bad port',
  );
}

describe('isBadPort', () => {
  it("names ports Node's fetch refuses: each listed one is refused, and none of their neighbours", async () => {
    const listed = Array.from({ length: 65_535 }, (_, i) => i + 1).filter(isBadPort);
    expect(listed).toContain(6000);
    const neighbours = [...new Set(listed.flatMap((port) => [port - 1, port + 1]))].filter(
      (port) => port > 0 && !isBadPort(port),
    );
    const [refusedListed, refusedNeighbours] = await Promise.all([
      Promise.all(listed.map(fetchRefuses)),
      Promise.all(neighbours.map(fetchRefuses)),
    ]);
    expect(listed.filter((_, i) => !refusedListed[i])).toEqual([]);
    expect(neighbours.filter((_, i) => refusedNeighbours[i])).toEqual([]);
    expect(isBadPort(0)).toBe(false);
    expect(isBadPort(4301)).toBe(false);
  });
});
