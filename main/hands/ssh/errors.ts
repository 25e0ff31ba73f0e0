/**
 * Why an SSH connection could not be made, in words a person can act on. Nothing here ever
 * includes key material.
 */

export type SshConnectErrorCode =
  | 'REFUSED'
  | 'TIMEOUT'
  | 'UNKNOWN_HOST'
  | 'UNREACHABLE'
  | 'AUTH'
  | 'KEY'
  | 'HOST_KEY_MISMATCH'
  | 'CONFIG'
  | 'WORKDIR'
  | 'ABORTED'
  | 'OTHER';

export class SshConnectError extends Error {
  constructor(
    readonly code: SshConnectErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'SshConnectError';
  }
}

/** Turns an error from ssh2 (or its socket) during connect into an SshConnectError. */
export function connectErrorFrom(err: Error & { code?: unknown; level?: string }, target: string, readyTimeoutMs: number): SshConnectError {
  const code = typeof err.code === 'string' ? err.code : '';
  const msg = err.message ?? String(err);
  switch (code) {
    case 'ECONNREFUSED':
      return new SshConnectError('REFUSED', `Cannot connect to ${target}: connection refused (nothing listens there; is sshd running and is the port right?).`);
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
    case 'EAI_NONAME':
      return new SshConnectError('UNKNOWN_HOST', `Cannot connect to ${target}: unknown host (the name does not resolve${code === 'EAI_AGAIN' ? '; DNS did not answer' : ''}).`);
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
    case 'EHOSTDOWN':
    case 'ENETDOWN':
      return new SshConnectError('UNREACHABLE', `Cannot connect to ${target}: the host is unreachable (${code}).`);
    case 'ETIMEDOUT':
      return new SshConnectError('TIMEOUT', `Cannot connect to ${target}: the connection timed out.`);
    case 'ECONNRESET':
    case 'EPIPE':
      return new SshConnectError('OTHER', `Cannot connect to ${target}: the connection was reset during the handshake (${code}).`);
  }
  if (err.level === 'client-timeout' || /Timed out while waiting for handshake/i.test(msg)) {
    return new SshConnectError('TIMEOUT', `Cannot connect to ${target}: no SSH handshake within ${Math.round(readyTimeoutMs / 100) / 10} s (host down, port filtered, or not an SSH server).`);
  }
  if (err.level === 'client-authentication' || /authentication methods failed/i.test(msg)) {
    return new SshConnectError('AUTH', `Authentication failed for ${target}: the server accepted none of the offered keys.`);
  }
  if (/no matching host key format/i.test(msg)) {
    return new SshConnectError('HOST_KEY_MISMATCH', `The host key of ${target} cannot be checked: the server offers no key of the type(s) recorded in known_hosts.`);
  }
  if (/Connection lost before handshake/i.test(msg)) {
    return new SshConnectError('OTHER', `Cannot connect to ${target}: the connection closed before the SSH handshake (not an SSH server, or it refused us: MaxStartups, AllowUsers, tcp wrappers).`);
  }
  return new SshConnectError('OTHER', `Cannot connect to ${target}: ${msg}`);
}
