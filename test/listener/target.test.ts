import { parse as parseUrl } from 'node:url';
import { describe, expect, it } from 'vitest';
import { proxyTarget } from '../../src/listener/forward.js';
import { normalizeForwardTarget } from '../../src/listener/index.js';
import { joinTargetPath, pathUnderBase } from '../../src/listener/target.js';

describe('--forward-to normalization', () => {
  it.each([
    ['3000', 'http://localhost:3000/'],
    ['3000/hooks', 'http://localhost:3000/hooks'],
    [':3000', 'http://localhost:3000/'],
    ['localhost:3000/hooks', 'http://localhost:3000/hooks'],
    ['127.0.0.1:8080', 'http://127.0.0.1:8080/'],
    ['https://app.test/hooks', 'https://app.test/hooks'],
    ['app_1:3000', 'http://app_1:3000/'],
    ['[::1]:3000/hooks', 'http://[::1]:3000/hooks'],
  ])('%s → %s', (input, expected) => {
    expect(normalizeForwardTarget(input).href).toBe(expected);
  });

  // A mistyped scheme must not become a host: `http:/localhost:3000` would otherwise forward to a host
  // named "http", and `htp//localhost:3000` to one named "htp".
  it.each(['ftp://x', 'http://[bad', '99999', 'http:/localhost:3000', 'htp//localhost:3000', 'ht!tp://x', 'localhost:30a0'])('refuses %s with a message saying what works', (input) => {
    expect(() => normalizeForwardTarget(input)).toThrow(/forward-to/);
  });
});

describe('path mapping', () => {
  const target = new URL('http://localhost:3000/hooks');
  it.each([
    ['/', '/hooks'],
    ['/a?b=1', '/hooks/a?b=1'],
    ['/?x=1', '/hooks?x=1'],
    ['/a/b', '/hooks/a/b'],
  ])('%s goes to %s', (path, expected) => {
    expect(joinTargetPath(target, path)).toBe(expected);
  });

  it('keeps the path as is for a target at the root', () => {
    expect(joinTargetPath(new URL('http://localhost:3000'), '/a?b=1')).toBe('/a?b=1');
    expect(joinTargetPath(new URL('http://localhost:3000'), '/')).toBe('/');
  });

  it('takes the part under --path, and nothing outside it', () => {
    expect(pathUnderBase('/webhooks/x?y=1', '/webhooks')).toBe('/x?y=1');
    expect(pathUnderBase('/webhooks', '/webhooks')).toBe('/');
    expect(pathUnderBase('/webhooksx', '/webhooks')).toBeNull();
    expect(pathUnderBase('/other', '/webhooks')).toBeNull();
  });
});

describe('the target as handed to http-proxy', () => {
  // http-proxy used to get the origin as a string and url.parse it for every request; the object
  // made once must carry what it read from that parse.
  it.each(['http://127.0.0.1:3000/hooks', 'http://localhost/', 'https://app.test/hooks', 'https://app.test:8443/', 'http://[::1]:3000/h'])('%s', (href) => {
    const target = new URL(href);
    const parsed = parseUrl(target.origin); // the reference: what http-proxy does with a string
    const { protocol, host, hostname, port, path, pathname } = parsed;
    expect(proxyTarget(target)).toEqual({ protocol, host, hostname, port: port ?? '', path, pathname });
  });
});
