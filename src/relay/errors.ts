import { CliError } from '../errors.js';
import { isCertificateError } from '../http/index.js';

/** What to do about a relay listen could not connect to, by the failure's code. */
function relayAdvice(code: string | undefined): string {
  if (isCertificateError(code)) {
    return "This machine does not trust the relay's TLS certificate. Give the relay one from a public authority (behind Caddy it gets one itself), or trust a self-signed one of your own relay: NODE_EXTRA_CA_CERTS=its-cert.pem npx clockhook listen --relay …";
  }
  if (code === 'EPROTO')
    return 'A relay that serves plain HTTP (no --tls-cert, no TLS proxy in front) is reached with --relay http://…';
  return 'Is the relay running (npx clockhook relay) and is --relay its base URL?';
}

/** The relay could not be reached when listen started; `code` is the last failure's (ECONNREFUSED, a TLS code…). */
export class RelayUnreachableError extends CliError {
  override readonly name = 'RelayUnreachableError';
  constructor(
    message: string,
    readonly code: string | undefined,
  ) {
    super(message);
  }

  override said(): string {
    return `${this.message}. ${relayAdvice(this.code)}`;
  }
}

/** The relay refused this listener's access key: none given, not known, or revoked. */
export class RelayRefusedError extends CliError {
  override readonly name = 'RelayRefusedError';

  override said(): string {
    return `the relay refused this listener: ${this.message}`;
  }
}
