import type { NetworkInterfaceInfo } from 'node:os';
import { stripVTControlCharacters } from 'node:util';
import { describe, expect, it } from 'vitest';
import { formatAdvice, formatChecks } from '../../src/cli/check.js';
import { captureFacts, deliveryLine, type LineFacts, statusWords } from '../../src/cli/delivery-line.js';
import { networkUrls } from '../../src/cli/listen-ready.js';
import { formatTable, wrapText } from '../../src/cli/output.js';
import type { CheckResult } from '../../src/check/index.js';
import type { Capture, CaptureForward } from '../../src/store/index.js';
import { captureStoryOf, storiesOf } from '../../src/story/index.js';
import { sampleCapture } from '../helpers/capture.js';

describe('formatTable', () => {
  const rows = [
    [
      'pass',
      'valid punch.created delivery is accepted',
      'punch.created evt_check_e156ba128ec41c31, correctly signed',
      '200 in 17 ms',
    ],
    [
      'FAIL',
      'a body changed after signing is rejected',
      'a signed envelope with one byte changed afterwards',
      '200 in 1 ms',
    ],
  ];

  it('pads every column to its widest cell and cuts nothing when no width is given', () => {
    const lines = formatTable(['', 'CHECK', 'SENT', 'GOT'], rows, undefined).split('\n');
    expect(lines[1]).toBe(`pass  ${rows[0][1]}  ${rows[0][2]}  200 in 17 ms`);
    expect(lines[2].indexOf('200 in 1 ms')).toBe(lines[1].indexOf('200 in 17 ms'));
  });

  it('fits a terminal by cutting the widest columns, marking each cut cell with …', () => {
    const lines = formatTable(['', 'CHECK', 'SENT', 'GOT'], rows, 80).split('\n');
    for (const line of lines) expect(line.length).toBeLessThanOrEqual(80);
    expect(lines[1]).toMatch(/valid punch\.created deliv\w*… {2}punch\.created evt_check_\w*… {2}200/);
    expect(lines[1]).toMatch(/200 in 17 ms$/);
    // The columns still line up.
    expect(lines[2].indexOf('200 in 1 ms')).toBe(lines[1].indexOf('200 in 17 ms'));
  });

  it('pads coloured cells by what shows, and never cuts them (their escape codes stay whole)', () => {
    const green = '\u001b[32mpass\u001b[39m';
    expect(
      formatTable(
        ['', 'NAME'],
        [
          [green, 'x'],
          ['FAIL', 'y'],
        ],
        undefined,
      )
        .split('\n')
        .slice(1),
    ).toEqual([`${green}  x`, 'FAIL  y']);
    const long = '\u001b[31mconnection refused by the app\u001b[39m';
    expect(formatTable(['ERROR'], [[long]], 20).split('\n')[1]).toBe(long);
  });

  it('cuts no column below 12 characters, however narrow the terminal', () => {
    const lines = formatTable(['A', 'B'], [['a'.repeat(30), 'b'.repeat(30)]], 10).split('\n');
    expect(lines[1]).toBe(`${'a'.repeat(11)}…  ${'b'.repeat(11)}…`);
  });

  it('wraps long cells between words onto lines under them instead, when asked to', () => {
    const lines = formatTable(
      ['', 'CHECK', 'GOT'],
      [
        ['FAIL', rows[1][1], '200 in 1 ms'],
        ['pass', 'short', '200 in 17 ms'],
      ],
      40,
      'wrap',
    ).split('\n');
    expect(lines).toEqual([
      '      CHECK                 GOT',
      'FAIL  a body changed after  200 in 1 ms',
      '      signing is rejected',
      'pass  short                 200 in 17 ms',
    ]);
  });
});

describe('wrapText', () => {
  it('breaks at spaces, keeping every word whole when it fits a line', () => {
    expect(wrapText('the quick brown fox jumps', 10)).toEqual(['the quick', 'brown fox', 'jumps']);
    expect(wrapText('fits', 10)).toEqual(['fits']);
    expect(wrapText('', 10)).toEqual(['']);
  });

  it('splits a word longer than a line, and loses no character', () => {
    const lines = wrapText('see https://example.com/a/very/long/path for more', 12);
    expect(lines).toEqual(['see', 'https://exam', 'ple.com/a/ve', 'ry/long/path', 'for more']);
  });
});

describe('the check table', () => {
  const checks: CheckResult[] = [
    {
      id: 'valid',
      name: 'valid punch.created delivery is accepted',
      status: 'pass',
      sent: 'punch.created evt_check_e156ba128ec41c31, correctly signed',
      got: '200 in 17 ms',
    },
    {
      id: 'wrong-secret',
      name: 'a signature made with another secret is rejected',
      status: 'fail',
      sent: 'an envelope signed with a different secret',
      got: '200 in 1 ms',
      hint: 'Verify it.',
    },
  ];

  it('has every column when it fits, or when it goes to a pipe', () => {
    for (const width of [200, undefined])
      expect(formatChecks(checks, width).split('\n')[0]).toMatch(/^ +CHECK +SENT +GOT$/);
  });

  it('leaves out SENT on a narrower terminal, so the names of the checks are not cut', () => {
    const lines = formatChecks(checks, 80).split('\n');
    expect(lines[0]).toMatch(/^ +CHECK +GOT$/);
    expect(lines[2]).toMatch(/a signature made with another secret is rejected +200 in 1 ms$/);
  });

  it('wraps the names on a terminal narrower still, cutting none', () => {
    const lines = formatChecks(checks, 40).split('\n');
    for (const line of lines) expect(line.length).toBeLessThanOrEqual(40);
    expect(lines.join('\n')).not.toContain('…');
    expect(
      lines
        .slice(3)
        .map((line) => line.slice(6, 28).trim())
        .join(' '),
    ).toBe(checks[1].name);
  });

  it('wraps each hint of "How to fix" under its text on a terminal, and leaves it on one line in a pipe', () => {
    const hinted = [
      {
        ...checks[1],
        hint: 'Verify X-Service-Signature with your endpoint secret and reject on mismatch: anyone can POST to your URL.',
      },
    ];
    // Without colour codes, should the tests run on a terminal.
    expect(stripVTControlCharacters(formatAdvice(hinted, undefined))).toBe(`  FAIL wrong-secret: ${hinted[0].hint}`);
    const lines = stripVTControlCharacters(formatAdvice(hinted, 50)).split('\n');
    expect(lines.length).toBeGreaterThan(2);
    for (const line of lines) expect(line.length).toBeLessThanOrEqual(50);
    expect(lines.slice(1).every((line) => line.startsWith('       ') && line[7] !== ' ')).toBe(true);
    expect(lines.map((line) => line.trim()).join(' ')).toBe(`FAIL wrong-secret: ${hinted[0].hint}`);
  });
});

describe('the delivery line', () => {
  /** A capture of evt_1 answered by the app as `forward` says, and the line listen and `captures list` give it. */
  const answered = (forward: Partial<CaptureForward> | null, extra: Partial<Capture> = {}) => {
    const capture = sampleCapture('evt_1', {
      forward: forward && {
        target: 'http://localhost:3000/hooks',
        headers: {},
        body: '',
        bodyEncoding: 'utf8',
        durationMs: 23,
        statusCode: 200,
        ...forward,
      },
      ...extra,
    });
    return captureFacts(capture, captureStoryOf(capture, storiesOf([capture])));
  };
  const report = answered({});
  const as = (kind: 'retry' | 'duplicate', words: string): LineFacts => ({
    ...report,
    story: { ...report.story!, kind, words },
  });

  it('names the event, the verdict and where it went', () => {
    expect(deliveryLine(report)).toMatch(
      /^\d\d:\d\d:\d\d --> punch\.created \[evt_1\] signature valid {2}<-- \[200\] POST http:\/\/localhost:3000\/hooks \(23 ms\)$/,
    );
  });

  it('says what a repeat was: a retry while the app had not taken the event, a duplicate once it had', () => {
    expect(deliveryLine(as('retry', 'retry 2'))).toMatch(
      /^\d\d:\d\d:\d\d retry 2 --> punch\.created \[evt_1\] signature valid /,
    );
    expect(deliveryLine({ ...as('duplicate', 'duplicate (the app had taken it)'), duplicateOf: 'cap_0' })).toMatch(
      /^\d\d:\d\d:\d\d duplicate \(the app had taken it\) --> punch\.created \[evt_1\] signature valid {2}<-- \[200\] /,
    );
  });

  it("paints an answer's status by its outcome, one way for listen's line, replay and replay --scenario", () => {
    const before = process.env.FORCE_COLOR;
    process.env.FORCE_COLOR = '1';
    try {
      expect(statusWords(200)).toBe('\x1b[32m[200]\x1b[39m');
      // A 200 the app cut short is no 2xx: the story counts it failed.
      expect(statusWords(200, { cut: true })).toBe('\x1b[31m[200 cut]\x1b[39m');
      expect(statusWords(null)).toBe('\x1b[31m[no answer]\x1b[39m');
      expect(statusWords(null, { pending: true })).toBe('\x1b[90m[…]\x1b[39m');
      expect(statusWords(400, { refused: true })).toBe('\x1b[90m[400]\x1b[39m');
      expect(deliveryLine(answered({ statusCode: 502 }))).toContain(statusWords(502));
      expect(deliveryLine(answered({ statusCode: 200, cut: true }))).toContain(statusWords(200, { cut: true }));
      // A signature not checked is a warning on every surface (the page's badge is amber too).
      expect(deliveryLine(answered({}, { signature: { status: 'unchecked' } }))).toContain(
        '\x1b[33msignature unchecked\x1b[39m',
      );
    } finally {
      if (before === undefined) delete process.env.FORCE_COLOR;
      else process.env.FORCE_COLOR = before;
    }
  });

  it("shows the record's status and time: no answer (not the 504 the sender got), the app's own time", () => {
    // The sender was answered 504 by clockhook; the line says what the app did, as captures list does.
    const timedOut = answered({ statusCode: null, durationMs: 30_012, error: 'timed out after 30000 ms' });
    expect(deliveryLine({ ...timedOut, status: 504 })).toMatch(/<-- \[no answer\] POST \S+ \(30012 ms\) timed out/);
    // Captured only: clockhook answered 200 itself, with no time of an app's.
    expect(deliveryLine(answered(null))).toMatch(/<-- \[200\] POST clockhook {2}\S*$|<-- \[200\] POST clockhook$/);
  });

  it('ends with what the app said when it did not take it, a 200 cut short too', () => {
    const said = JSON.stringify({ error: 'No signatures found matching the expected "signature"' });
    expect(deliveryLine(answered({ statusCode: 400, body: said }))).toMatch(
      / {2}<-- \[400\] POST http:\/\/localhost:3000\/hooks \(23 ms\) "No signatures found matching the expected \\"signature\\"" {2}failing: the service tries again \(attempt 2 of 5\)$/,
    );
    const cut = answered({ statusCode: 200, body: 'partial', cut: true, error: 'the app closed the connection' });
    expect(deliveryLine(cut)).toMatch(/\[200 cut\] .* the app closed the connection "partial" {2}failing/);
  });

  it('says a request refused unread was not captured, without a verdict it never had', () => {
    const busy: LineFacts = {
      ...report,
      captureId: null,
      eventId: null,
      type: null,
      signature: 'unchecked',
      story: null,
      target: null,
      status: 503,
      durationMs: 0,
      error: 'listener_busy',
    };
    expect(deliveryLine(busy)).toMatch(
      /^\d\d:\d\d:\d\d --> POST \(not captured\) {2}<-- \[503\] clockhook \(0 ms\) listener_busy$/,
    );
  });
});

describe("listen's Network line", () => {
  const entry = (address: string, family: 'IPv4' | 'IPv6', internal = false) =>
    ({
      address,
      family,
      internal,
      netmask: '',
      mac: '',
      cidr: null,
      ...(family === 'IPv6' ? { scopeid: 0 } : {}),
    }) as NetworkInterfaceInfo;
  const interfaces = {
    lo: [entry('127.0.0.1', 'IPv4', true), entry('::1', 'IPv6', true)],
    eth0: [entry('192.168.1.20', 'IPv4'), entry('fe80::1', 'IPv6'), entry('2001:db8::7', 'IPv6')],
    docker0: [entry('172.17.0.1', 'IPv4')],
  };

  it("gives the listener's URL at each of the machine's outside addresses when it listens on every interface", () => {
    expect(networkUrls('http://127.0.0.1:4300/hooks', '0.0.0.0', interfaces)).toEqual([
      'http://192.168.1.20:4300/hooks',
      'http://172.17.0.1:4300/hooks',
    ]);
    expect(networkUrls('http://127.0.0.1:4300/', '::', interfaces)).toEqual([
      'http://192.168.1.20:4300/',
      'http://[2001:db8::7]:4300/',
      'http://172.17.0.1:4300/',
    ]);
  });

  it('is not there when the listener is on one address', () => {
    expect(networkUrls('http://127.0.0.1:4300/', '127.0.0.1', interfaces)).toEqual([]);
    expect(networkUrls('http://192.168.1.20:4300/', '192.168.1.20', interfaces)).toEqual([]);
  });
});
