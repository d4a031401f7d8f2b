import { UsageError } from './errors.js';
import { flushOutput } from './output.js';

/** Resolves after SIGINT or SIGTERM, once `stop` has finished; a second signal exits at once. */
export function onShutdown(stop: () => Promise<void>): Promise<void> {
  return new Promise((resolve, reject) => {
    let stopping = false;
    const handler = () => {
      if (stopping) {
        flushOutput();
        process.exit(1);
      }
      stopping = true;
      stop().then(resolve, reject);
    };
    process.on('SIGINT', handler);
    process.on('SIGTERM', handler);
  });
}

export function parsePort(value: string, flag: string): number {
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65_535) throw new UsageError(`${flag} must be a port number 0-65535 (got ${value}).`);
  return port;
}

export function parsePositiveInt(value: string, flag: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new UsageError(`${flag} must be a positive whole number (got ${value}).`);
  return n;
}
