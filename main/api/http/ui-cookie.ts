import type { Context } from 'hono';
import { getCookie } from 'hono/cookie';

/**
 * The window's session cookie. `__Host-corral_ui` (Secure, Path=/, no Domain: the browser ties
 * it to this exact origin's host and refuses it from plain http elsewhere) where the browser
 * accepts it: over https, and over http on localhost/127.0.0.1/[::1], which Chromium treats as
 * secure contexts. Over plain http on another name (serve --host with allowed hosts) the
 * browser would drop a Secure cookie, so the plain `corral_ui` is used there.
 */
export const HOST_COOKIE = '__Host-corral_ui';
export const PLAIN_COOKIE = 'corral_ui';

const LOOPBACK_NAMES = new Set(['localhost', '127.0.0.1', '[::1]']);

/** The cookie's name and attributes for this request. */
export function sessionCookie(c: Context): { name: string; options: { httpOnly: true; sameSite: 'Strict'; path: '/'; secure?: true } } {
  const url = new URL(c.req.url);
  const secureContext = url.protocol === 'https:' || LOOPBACK_NAMES.has(url.hostname);
  return secureContext
    ? { name: HOST_COOKIE, options: { httpOnly: true, sameSite: 'Strict', path: '/', secure: true } }
    : { name: PLAIN_COOKIE, options: { httpOnly: true, sameSite: 'Strict', path: '/' } };
}

/** The session token the request carries, under either name. */
export function cookieOf(c: Context): string | undefined {
  return getCookie(c, HOST_COOKIE) ?? getCookie(c, PLAIN_COOKIE);
}

/** Whether an `Origin` header names the host the request was sent to; a missing Origin is not. */
export function sameOrigin(origin: string | undefined, host: string | undefined): boolean {
  if (!origin || !host || !URL.canParse(origin)) return false;
  const u = new URL(origin);
  return (u.protocol === 'http:' || u.protocol === 'https:') && u.host === host;
}
