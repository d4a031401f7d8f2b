import { parse as parseUrl } from 'node:url';
import { describe, expect, it } from 'vitest';
import { proxyTarget } from '../../src/listener/forward.js';
import { normalizeForwardTarget } from '../../src/listener/index.js';
import { isListenerItself, joinTargetPath, normalizeBasePath, pathUnderBase } from '../../src/listener/target.js';
import { networkInterfaces } from 'node:os';

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
  it.each([
    'ftp://x',
    '0',
    'http://[bad',
    '99999',
    'http:/localhost:3000',
    'htp//localhost:3000',
    'ht!tp://x',
    'localhost:30a0',
  ])('refuses %s with a message naming it and saying what works', (input) => {
    expect(() => normalizeForwardTarget(input)).toThrow(`--forward-to ${JSON.stringify(input)}`);
    expect(() => normalizeForwardTarget(input)).toThrow(/try 3000/);
  });

  it.each([
    ['localhost:99999', 'its port must be 1-65535 (it is 99999)'],
    ['99999', 'its port must be 1-65535 (it is 99999)'],
    ['http://127.0.0.1:70000/hooks', 'its port must be 1-65535 (it is 70000)'],
    ['ftp://x', 'uses ftp:, but the app is reached over http or https'],
  ])('says what is wrong with %s', (input, said) => {
    expect(() => normalizeForwardTarget(input)).toThrow(said);
  });
});

describe('--path', () => {
  it.each([
    ['hooks', '/hooks'],
    ['/hooks/', '/hooks'],
    ['//', '/'],
    ['/a%20b', '/a%20b'],
  ])('%s is %s', (given, path) => {
    expect(normalizeBasePath(given)).toBe(path);
  });

  it.each([
    ['?x', '--path "?x" has a query or fragment; give a path only, such as /webhooks.'],
    ['/hooks#a', '--path "/hooks#a" has a query or fragment; give a path only, such as /webhooks.'],
    [
      '/a b',
      '--path "/a b" is not a URL path as written: a URL makes it /a%20b. Give --path /a%20b, or a path such as /webhooks.',
    ],
    [
      '/a/../b',
      '--path "/a/../b" is not a URL path as written: a URL makes it /b. Give --path /b, or a path such as /webhooks.',
    ],
  ])('refuses %s, which no delivery could reach', (given, message) => {
    expect(() => normalizeBasePath(given)).toThrow(new TypeError(message));
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

  it("keeps the target's own query, before the delivery's", () => {
    const withQuery = new URL('http://localhost:3000/hooks?app=1');
    expect(joinTargetPath(withQuery, '/')).toBe('/hooks?app=1');
    expect(joinTargetPath(withQuery, '/a?b=2')).toBe('/hooks/a?app=1&b=2');
    expect(joinTargetPath(new URL('http://localhost:3000/?app=1'), '/?')).toBe('/?app=1');
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
  it.each([
    'http://127.0.0.1:3000/hooks',
    'http://localhost/',
    'https://app.test/hooks',
    'https://app.test:8443/',
    'http://[::1]:3000/h',
  ])('%s', (href) => {
    const target = new URL(href);
    const parsed = parseUrl(target.origin); // the reference: what http-proxy does with a string
    const { protocol, host, hostname, port, path, pathname } = parsed;
    expect(proxyTarget(target)).toEqual({ protocol, host, hostname, port: port ?? '', path, pathname });
  });
});

describe('a --forward-to that is the listener itself', () => {
  const outward = Object.values(networkInterfaces())
    .flatMap((infos) => infos ?? [])
    .find((info) => !info.internal && info.family === 'IPv4')?.address;

  it.each([
    ['http://localhost:4300/', '127.0.0.1', 4300, true],
    ['http://127.0.0.1:4300/hooks', '127.0.0.1', 4300, true],
    ['http://[::1]:4300/', '127.0.0.1', 4300, true],
    ['http://localhost:4300/', 'localhost', 4300, true],
    ['http://localhost:4300/', '0.0.0.0', 4300, true],
    ['http://localhost:3000/', '127.0.0.1', 4300, false],
    ['http://localhost/', '127.0.0.1', 80, true],
    ['https://localhost/', '127.0.0.1', 80, false],
    ['http://203.0.113.9:4300/', '0.0.0.0', 4300, false],
  ])('%s, listener on %s:%i: %s', async (target, host, port, itself) => {
    expect(await isListenerItself(new URL(target), { host, port })).toBe(itself);
  });

  it.runIf(outward !== undefined)(
    "counts this machine's other addresses only for a listener on every interface",
    async () => {
      const target = new URL(`http://${outward}:4300/`);
      expect(await isListenerItself(target, { host: '0.0.0.0', port: 4300 })).toBe(true);
      expect(await isListenerItself(target, { host: '127.0.0.1', port: 4300 })).toBe(false);
    },
  );
});
