import { createServer } from 'node:net';

/**
 * A free port for a server that a test stops and starts again on the same port. Not one from
 * listen(0): those come from the ephemeral range (32768–60999 on Linux), where any other test's
 * server or outgoing connection may be given it while it is unbound between the two runs. Below
 * that range only a test that names the port takes it.
 */
export async function portForRestarts(): Promise<number> {
  for (;;) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    const free = await new Promise<boolean>((resolve) => {
      const server = createServer();
      server.once('error', () => resolve(false));
      server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
    });
    if (free) return port;
  }
}
