/**
 * A failed request to a receiver in words, for the listener's forward, the sandbox's attempts and check
 * alike; `peer` names who was asked ("the app", "the receiver").
 */
export function describeConnectionError(error: NodeJS.ErrnoException, peer: string): string {
  switch (error.code) {
    case 'ECONNREFUSED':
      return 'connection refused';
    case 'ECONNRESET':
      // Node's code both for a reset and for a close ("socket hang up"), after the request went out.
      return `${peer} closed the connection without answering`;
    case 'ENOTFOUND':
      return 'host not found';
    case 'EPROTO':
      // OpenSSL's "wrong version number", most often: an https:// address of something that speaks plain HTTP.
      return `the TLS handshake failed: ${peer} does not seem to speak TLS (is its address http://?)`;
    default:
      return error.message;
  }
}

/** Node's codes for a TLS certificate it does not trust: self-signed, an unknown issuer, expired, for another name. */
const CERTIFICATE_CODES = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'ERR_TLS_CERT_ALTNAME_INVALID',
]);

/** Whether a connection failed because the peer's certificate is not trusted. */
export const isCertificateError = (code: string | undefined) => code !== undefined && CERTIFICATE_CODES.has(code);
