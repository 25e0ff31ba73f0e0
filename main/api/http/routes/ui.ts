import fs from 'node:fs';
import path from 'node:path';
import { serveStatic } from '@hono/node-server/serve-static';
import { upgradeWebSocket } from '@hono/node-server';
import { Hono } from 'hono';
import { deleteCookie, setCookie } from 'hono/cookie';
import type { Host } from '../../../host';
import { openUiChannel } from '../../ui/channel';
import { uiServiceFor } from '../../ui/service';
import type { SlowReaderOptions } from '../../reader-limits';
import { guardCredential } from '../auth-guard';
import type { FailureThrottle } from '../throttle';
import type { ServerAuth } from '../ui-auth';
import { cookieOf, sameOrigin, sessionCookie } from '../ui-cookie';
import { CLOSE_TOO_SLOW, socketFlow, type SendBuffer } from '../ws-flow';

/** Options of the UI routes. */
export interface UiRouteOptions extends SlowReaderOptions {
  auth: ServerAuth;
  /** Counts wrong link codes per address (apart from wrong API keys). */
  throttle: FailureThrottle;
  /** The built renderer (out/renderer); the UI answers 503 with a hint when it is missing. */
  rendererDir: string;
}

const CSP = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'";

/**
 * The UI in a browser: `/?code=CODE` (a one-time code from the link `serve` printed or minted)
 * is traded for a random session cookie (HttpOnly, SameSite=Strict, `__Host-` where the browser
 * takes it) and the page is sent to a clean URL; `/ui/ws` is the renderer's API over a
 * WebSocket, authorised by that cookie and a same-origin `Origin`; `POST /ui/logout` ends the
 * session; everything else is the built renderer.
 */
export function uiRoutes(host: Host, opts: UiRouteOptions): Hono {
  const app = new Hono();
  const { auth } = opts;
  const ui = uiServiceFor(host);
  // Open sockets and their session tokens: a revoked session (logout, key rotation) closes its sockets.
  const open = new Map<{ close(code: number, reason: string): void }, string>();
  auth.onRevoke(() => {
    for (const [ws, token] of open) {
      if (!auth.sessionValid(token)) {
        open.delete(ws);
        ws.close(4401, 'session ended: open a new link');
      }
    }
  });

  app.get(
    '/ui/ws',
    upgradeWebSocket((c) => {
      const token = cookieOf(c);
      const authorised = auth.sessionValid(token);
      // A browser always sends Origin on a WebSocket; a request without one is no page of ours
      // (a replayed cookie from a script), and `Origin: null` is no URL: both refused.
      const fromUs = sameOrigin(c.req.header('origin'), c.req.header('host'));
      let channel: ReturnType<typeof openUiChannel> | undefined;
      let flow: ReturnType<typeof socketFlow> | undefined;
      return {
        onOpen(_evt, ws) {
          if (!fromUs) return ws.close(4403, 'cross-origin connection refused (a same-origin Origin header is required)');
          if (!authorised || !token) return ws.close(4401, 'not authorised: open a link from corral serve (`npm run serve -- link` prints a new one)');
          open.set(ws, token);
          const socket = ws.raw as (SendBuffer & { terminate(): void; send(data: Buffer, opts: { binary: boolean; fin: boolean }): void }) | undefined;
          if (!socket) return ws.close(1011, 'no socket');
          flow = socketFlow(socket, {
            stallMs: opts.stallMs,
            onTooSlow(reason) {
              // The close frame waits behind what the client has not read: it gets a moment,
              // then the socket goes and with it everything queued. The client reconnects and
              // resumes each watchEvents after the last event it received.
              console.warn(`corral: slow UI socket closed: ${reason}`);
              channel?.close();
              ws.close(CLOSE_TOO_SLOW, 'too slow: nothing read for too long; reconnect to resume');
              setTimeout(() => socket.terminate(), 1000).unref();
            },
          });
          channel = openUiChannel(
            ui,
            (text) => {
              if (ws.readyState !== 1) return;
              ws.send(text);
              flow?.sent();
            },
            flow,
            (parts) => {
              if (ws.readyState !== 1) return;
              // One text message in fragments, all sent in this synchronous run: nothing can come between them.
              parts.forEach((part, i) => socket.send(part, { binary: false, fin: i === parts.length - 1 }));
              flow?.sent();
            },
          );
        },
        onMessage(evt) {
          if (typeof evt.data === 'string') channel?.onMessage(evt.data);
        },
        onClose(_evt, ws) {
          open.delete(ws);
          flow?.close();
          channel?.close();
        },
      };
    }, { onError: (err) => host.logger.error({ err }, 'UI socket handler failed') }),
  );

  app.use('*', async (c, next) => {
    c.header('content-security-policy', CSP);
    c.header('x-content-type-options', 'nosniff');
    c.header('referrer-policy', 'no-referrer');
    await next();
  });

  app.get('/', async (c, next) => {
    const code = c.req.query('code');
    if (c.req.query('token') !== undefined) {
      return c.text('Links no longer carry the API key. Open the link `corral serve` printed, or get a new one with `npm run serve -- link`.', 401);
    }
    if (code === undefined) return next();
    const url = new URL(c.req.url);
    url.searchParams.delete('code');
    let session: ReturnType<ServerAuth['redeem']>;
    const refused = guardCredential(
      c,
      opts.throttle,
      'code',
      () => (session = auth.redeem(code)) !== undefined,
      () => c.text('That link was used already, has expired or is wrong. Get a new one with `npm run serve -- link`.', 401),
    );
    if (refused) return refused;
    const cookie = sessionCookie(c);
    setCookie(c, cookie.name, session!.token, { ...cookie.options, maxAge: session!.maxAgeSeconds });
    return c.redirect(`${url.pathname}${url.search}`, 303);
  });

  app.post('/ui/logout', (c) => {
    const token = cookieOf(c);
    if (token) auth.revoke(token);
    const cookie = sessionCookie(c);
    deleteCookie(c, cookie.name, cookie.options);
    return c.body(null, 204);
  });

  // Made on first use: serveStatic complains at construction when the folder is missing.
  let files: ReturnType<typeof serveStatic> | undefined;
  let page: ReturnType<typeof serveStatic> | undefined;
  app.get('*', async (c, next) => {
    if (!fs.existsSync(path.join(opts.rendererDir, 'index.html'))) {
      return c.text('The UI is not built: run `npm run build` (or start with `npm run serve`, which builds it).', 503);
    }
    files ??= serveStatic({ root: opts.rendererDir });
    page ??= serveStatic({ path: path.join(opts.rendererDir, 'index.html') });
    let rel: string;
    try {
      rel = decodeURIComponent(c.req.path);
    } catch {
      return c.text('bad path', 400);
    }
    if (rel.includes('\0')) return c.text('bad path', 400);
    const file = path.join(opts.rendererDir, rel);
    const inside = file.startsWith(opts.rendererDir + path.sep);
    if (inside && isFile(file)) return files(c, next);
    // A missing asset is a 404; any other path is a route of the single-page app.
    if (path.extname(rel)) return c.text(`nothing at ${c.req.path}`, 404);
    return page(c, next);
  });
  return app;
}

/** Whether a path names a file; false for any path the file system refuses (too long, …). */
function isFile(file: string): boolean {
  try {
    return fs.statSync(file, { throwIfNoEntry: false })?.isFile() ?? false;
  } catch {
    return false;
  }
}

