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
 * Checks a credential under the throttle: a blocked address gets 429 without its credential
 * being looked at; a failure counts (and may start the block); a success clears the count.
 * Returns a response to send, or undefined to go on.
 */
export function guardCredential(c: Context, throttle: FailureThrottle, ok: () => boolean, refuse: () => Response): Response | undefined {
  const addr = clientAddress(c);
  const wait = throttle.retryAfter(addr);
  if (wait > 0) return tooManyFailures(c, wait);
  if (!ok()) {
    const blocked = throttle.fail(addr);
    return blocked > 0 ? tooManyFailures(c, blocked) : refuse();
  }
  throttle.succeed(addr);
  return undefined;
}
