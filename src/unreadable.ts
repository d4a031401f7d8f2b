// Why a file could not be read, in words for people, whichever file it was (a config, a scenario, --data, a TLS
// certificate): one wording for the same failure everywhere.

/** The error's code in words (no such file, a folder, no permission), else its own message. */
export function whyUnreadable(error: unknown): string {
  const { code, message } = error as NodeJS.ErrnoException;
  if (code === 'ENOENT') return 'no such file';
  if (code === 'EISDIR') return 'it is a folder';
  if (code === 'EACCES' || code === 'EPERM') return 'permission denied';
  return message;
}
