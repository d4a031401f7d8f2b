// The features whose packages an install does not bring (package.json's optional peer dependencies): tracing's
// OpenTelemetry and the relay's Redis client, a few tens of MB that most users never start. Each is loaded when
// its feature starts; missing, the command stops (exit 2) with the one line that adds them at the versions
// clockhook is tested with.
import { readFileSync } from 'node:fs';
import { UsageError } from './errors.js';

/** Each optional feature: what the user asked for, and its packages. */
export const OPTIONAL_FEATURES = {
  tracing: {
    asked: 'Tracing (--otlp, or OTEL_EXPORTER_OTLP_ENDPOINT set; OTEL_SDK_DISABLED=true turns it off)',
    packages: [
      '@opentelemetry/api',
      '@opentelemetry/core',
      '@opentelemetry/exporter-trace-otlp-http',
      '@opentelemetry/resources',
      '@opentelemetry/sdk-trace-node',
    ],
  },
  redis: { asked: 'A relay on Redis (--redis)', packages: ['@redis/client'] },
} as const;

export type OptionalFeature = keyof typeof OPTIONAL_FEATURES;

/** The command that installs a feature's packages, each at the range clockhook's package.json gives it. */
export function installLine(feature: OptionalFeature): string {
  const manifest = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
    peerDependencies: Record<string, string>;
  };
  const specs = OPTIONAL_FEATURES[feature].packages.map((name) => `"${name}@${manifest.peerDependencies[name]}"`);
  return `npm i -D ${specs.join(' ')}`;
}

/** A feature's packages are not installed: said with the line that installs them. Exit 2. */
export class MissingFeatureError extends UsageError {
  override readonly name = 'MissingFeatureError';
  constructor(readonly feature: OptionalFeature) {
    const { asked, packages } = OPTIONAL_FEATURES[feature];
    const them = packages.length === 1 ? `${packages[0]}, which is` : `${packages.length} packages, which are`;
    super(
      `${asked} needs ${them} not installed with clockhook. Add ${packages.length === 1 ? 'it' : 'them'} to your project: ${installLine(feature)}`,
    );
  }
}

/** Loads a feature's module (`load` imports it); its packages missing, a MissingFeatureError. */
export async function loadFeature<T>(feature: OptionalFeature, load: () => Promise<T>): Promise<T> {
  try {
    return await load();
  } catch (error) {
    const { code, message } = error as NodeJS.ErrnoException;
    const missing = code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND';
    if (missing && OPTIONAL_FEATURES[feature].packages.some((name) => message.includes(`'${name}'`)))
      throw new MissingFeatureError(feature);
    throw error;
  }
}
