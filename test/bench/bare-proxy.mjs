// Scenario B of the benchmark: a bare http-proxy in its own process, like the listener.
// node bare-proxy.mjs <target> [keepalive|default]; prints its port.
import { Agent, createServer } from 'node:http';
import httpProxy from 'http-proxy';

const [target, mode = 'keepalive'] = process.argv.slice(2);
const proxy = httpProxy.createProxyServer({
  target,
  agent: mode === 'keepalive' ? new Agent({ keepAlive: true }) : undefined,
});
const server = createServer((req, res) => proxy.web(req, res));
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => process.stdout.write(`${server.address().port}\n`));
