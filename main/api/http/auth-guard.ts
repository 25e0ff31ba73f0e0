import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { Context } from 'hono';
import { getConnInfo } from '@hono/node-server/conninfo';
import { ApiError, errorResponse } from './errors';
import type { FailureThrottle } from './throttle';

/** The client's address, for throttling; 'unknown' when the app is called without a socket (tests). */
export function clientAddress(c: Context): string {
  try {
    return getConnInfo(c).remote.address ?? 'unknown';
  } catch {
    return 'unknown';
  }
}

/** 429 with retry-after: too many wrong credentials from this address. */
export function tooManyFailures(c: Context, seconds: number): Response {
  c.header('retry-after', String(seconds));
  return errorResponse(c, new ApiError('rate_limit_error', `too many failed attempts from this address: try again in ${seconds} s`));
}

/**
 * What is being presented, each with a budget of its own per address: the API key (and the
 * worker credentials presented the same way), and a link's one-time code. The window's
 * session cookie is not throttled at all: it is 32 random bytes the server minted, so guessing
 * one gains nothing, and counting wrong ones would only let a local process lock the window out.
 */
export type CredentialKind = 'key' | 'code';

/**
 * Connections (TCP sockets) that presented a right credential. While an address is blocked,
 * such a connection is still checked and served: it cannot be a guesser's (a guesser's
 * connection never succeeded), so the user's client that keeps its connection open is not
 * locked out by another local process's wrong keys, and no guesser learns anything. A wrong
 * credential on it takes the trust away.
 */
const proven = new WeakSet<Socket>();

function socketOf(c: Context): Socket | undefined {
  return (c.env as { incoming?: IncomingMessage } | undefined)?.incoming?.socket;
}

/**
 * Checks a credential under the throttle: a blocked address gets 429 without its credential
 * being looked at (unless the connection already proved it, above); a failure counts toward
 * the address's budget for this kind (and may start the block); a success marks the
 * connection. Returns a response to send, or undefined to go on.
 */
export function guardCredential(c: Context, throttle: FailureThrottle, kind: CredentialKind, ok: () => boolean, refuse: () => Response): Response | undefined {
  const key = `${kind} ${clientAddress(c)}`;
  const socket = socketOf(c);
  const wait = throttle.retryAfter(key);
  if (wait > 0 && !(socket && proven.has(socket))) return tooManyFailures(c, wait);
  if (!ok()) {
    if (socket) proven.delete(socket);
    const blocked = throttle.fail(key);
    return blocked > 0 ? tooManyFailures(c, blocked) : refuse();
  }
  if (socket) proven.add(socket);
  return undefined;
}
