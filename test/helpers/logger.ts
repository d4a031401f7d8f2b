import type { Logger } from '../../src/logger.js';

/** A logger that keeps what it is told, by level, for the test to read (STYLE.md's recording logger). */
export function recordingLogger(): Logger & { infos: string[]; warnings: string[]; errors: string[] } {
  const infos: string[] = [];
  const warnings: string[] = [];
  const errors: string[] = [];
  return {
    infos,
    warnings,
    errors,
    info: (m) => infos.push(m),
    warn: (m) => warnings.push(m),
    error: (m) => errors.push(m),
  };
}
