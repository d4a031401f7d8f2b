// Scenario F of the benchmark: the floor. The least a proxy does to keep the promise clockhook listen keeps,
// and nothing else: each request read whole, its X-Service-Signature checked over the raw bytes, the envelope
// parsed, the capture appended to a journal as a JSON line and fdatasynced (one write and one fsync a batch,
// as listen groups them) before the exact bytes go to the app with http-proxy (keep-alive), the app's answer
// passed back and its status appended. No story, page, terminal line, retention, error handling or words:
// what listen costs above this row is what makes it clockhook; below it, nothing that keeps the promise goes.
// node floor-proxy.mjs <target> <journal file> <secret> [least]; prints its port. With `least`, it does even less
// (docs/performance.md, "Is F the least there is?"): no envelope parsed, the body appended as its bytes are,
// and the app's answer streamed back by http-proxy itself, as the bare proxy (B) does.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { fdatasync, openSync, writeSync } from 'node:fs';
import { Agent, createServer } from 'node:http';
import httpProxy from 'http-proxy';

const [target, journal, secret, mode] = process.argv.slice(2);
const least = mode === 'least';
const fd = openSync(journal, 'a');
/** The captures held, newest last (listen's store holds them in memory too). */
const held = [];
const lines = [];
let waiting = [];
let scheduled = false;
let syncing = false;

function flush() {
  scheduled = false;
  if (lines.length > 0) writeSync(fd, `${lines.splice(0).join('\n')}\n`);
  if (syncing || waiting.length === 0) return;
  const batch = waiting;
  waiting = [];
  syncing = true;
  fdatasync(fd, () => {
    syncing = false;
    for (const forward of batch) forward();
    if (waiting.length > 0 || lines.length > 0) schedule();
  });
}

function schedule() {
  if (scheduled) return;
  scheduled = true;
  setImmediate(flush);
}

function verify(header, body) {
  const [, t] = /t=(\d+)/.exec(header ?? '') ?? [];
  const [, v1] = /v1=([0-9a-f]{64})/.exec(header ?? '') ?? [];
  if (!t || !v1) return 'invalid';
  const digest = createHmac('sha256', secret).update(`${t}.`).update(body).digest();
  return timingSafeEqual(digest, Buffer.from(v1, 'hex')) ? 'valid' : 'invalid';
}

const agent = new Agent({ keepAlive: true });
const proxy = httpProxy.createProxyServer({ target, agent, selfHandleResponse: !least });
proxy.on('proxyRes', (answer, req, res) => {
  if (!least) {
    res.writeHead(answer.statusCode, answer.headers);
    answer.on('data', (chunk) => res.write(chunk));
  }
  answer.on('end', () => {
    if (!least) res.end();
    req.capture.status = answer.statusCode;
    lines.push(JSON.stringify({ id: req.capture.id, status: answer.statusCode }));
    schedule();
  });
});
proxy.on('error', (error, req, res) => res.writeHead(502).end(error.message));

let count = 0;
const server = createServer((req, res) => {
  const chunks = [];
  req.on('data', (chunk) => chunks.push(chunk));
  req.on('end', () => {
    const body = Buffer.concat(chunks);
    const envelope = least ? null : JSON.parse(body);
    const capture = {
      id: `cap_${(count += 1)}`,
      receivedAt: new Date().toISOString(),
      method: req.method,
      path: req.url,
      headers: req.headers,
      body: least ? undefined : body.toString('utf8'),
      signature: verify(req.headers['x-service-signature'], body),
      envelope: least ? undefined : { id: envelope.id, type: envelope.type },
    };
    held.push(capture);
    if (held.length > 1000) held.shift();
    lines.push(JSON.stringify(capture));
    if (least) lines.push(body.toString('latin1'));
    waiting.push(() => {
      req.capture = capture;
      proxy.web(req, res, { buffer: { pipe: (destination) => destination.end(body) } });
    });
    schedule();
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => process.stdout.write(`${server.address().port}\n`));
