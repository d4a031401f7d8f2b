import { OptionError } from './errors.js';
/** Sizes as flags give them and as messages say them, in 1024s. */

/**
 * Parses `5mb`, `512kb`, `1048576` into bytes. Units count in 1024s, as Node's and nginx's do; `k`,
 * `m`, `g` (nginx) and `kib`, `mib`, `gib` are the same units.
 */
export function parseSize(value: string): number {
  const match = /^(\d+(?:\.\d+)?)\s*(?:b|([kmg])i?b?)?$/i.exec(value.trim());
  if (!match)
    throw new OptionError(`size ${JSON.stringify(value)} is not a number of bytes or a size like 512kb or 5mb.`);
  const power = match[2] ? 'kmg'.indexOf(match[2].toLowerCase()) + 1 : 0;
  return Math.floor(Number(match[1]) * 1024 ** power);
}

/** `67108864` → `64 MiB`, to one decimal. */
export const formatMiB = (bytes: number): string => `${Math.round((bytes / 1024 / 1024) * 10) / 10} MiB`;

/** The smallest whole size flag of at least `bytes`: `5242880` → `5mb`, to put in a message as the user would type it. */
export const formatSizeFlag = (bytes: number): string => `${Math.ceil(bytes / 1024 / 1024)}mb`;
