import { describe, expect, it } from 'vitest';
import { type DroppedRequest, idOfDropped, LineGuard } from '../../src/mcp/stdio-guard.js';

// The lines before the SDK's reader: whole ones pass as they came, a long one is dropped as it streams.
describe('LineGuard', () => {
  it('passes lines within the limit whole, drops a longer one in any chunks, and tells its id and size', async () => {
    const dropped: DroppedRequest[] = [];
    const guard = new LineGuard(100, (d) => dropped.push(d));
    const out: Buffer[] = [];
    guard.on('data', (chunk: Buffer) => out.push(chunk));
    const long = `{"method":"tools/call","params":{"x":"${'a'.repeat(300)}"},"jsonrpc":"2.0","id":7}`;
    const input = `{"a":1}\n${long}\n{"b":2}\n`;
    for (let i = 0; i < input.length; i += 37) guard.write(Buffer.from(input.slice(i, i + 37)));
    guard.end();
    await new Promise((resolve) => guard.once('end', resolve));
    expect(Buffer.concat(out).toString()).toBe('{"a":1}\n{"b":2}\n');
    expect(dropped).toEqual([{ id: 7, bytes: long.length }]);
  });

  it('finds an id written first or last, a string id too, and none in what is not JSON-RPC', () => {
    expect(idOfDropped('{"jsonrpc":"2.0","id":"req-1","method":"tools/call","params":{', '"}}')).toBe('req-1');
    expect(idOfDropped('{"method":"x","params":{"id":"inner"', '"},"jsonrpc":"2.0","id":42}')).toBe(42);
    expect(idOfDropped('zzzz', 'zzzz')).toBeUndefined();
  });
});
