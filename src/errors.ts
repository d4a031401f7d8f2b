/**
 * A refused replay or inspector action (no capture by that id, nothing to forward to, no secret to
 * re-sign with…): `code` is stable for the page and scripts, `message` says what to do.
 */
export class ActionError extends Error {
  override readonly name = 'ActionError';
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}
