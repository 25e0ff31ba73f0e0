import fs from 'node:fs';
import path from 'node:path';
import { serveStatic } from '@hono/node-server/serve-static';
import { upgradeWebSocket } from '@hono/node-server';
import { Hono } from 'hono';
import { getCookie, setCookie } from 'hono/cookie';
import type { Host } from '../../../host';
import { openUiChannel } from '../../ui/channel';
import { uiServiceFor } from '../../ui/service';
import type { SlowReaderOptions } from '../../reader-limits';
import { keyMatches, UI_COOKIE, uiCookieValue } from '../auth';
import { CLOSE_TOO_SLOW, socketFlow, type SendBuffer } from '../ws-flow';

/** Options of the UI routes. */
export interface UiRouteOptions extends SlowReaderOptions {
  apiKey: string;
  /** The built renderer (out/renderer); the UI answers 503 with a hint when it is missing. */
  rendererDir: string;
}

const CSP = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'";

/**
 * The UI in a browser: `/?token=KEY` trades the key for an HttpOnly cookie and redirects to a
 * clean URL (the key never stays in the address bar); `/ui/ws` is the renderer's API over a
 * WebSocket, authorised by that cookie; everything else is the built renderer.
 */
export function uiRoutes(host: Host, opts: UiRouteOptions): Hono {
  const app = new Hono();
  const cookie = uiCookieValue(opts.apiKey);
  const ui = uiServiceFor(host);

  app.get(
    '/ui/ws',
    upgradeWebSocket((c) => {
      const authorised = getCookie(c, UI_COOKIE) === cookie;
      const origin = c.req.header('origin');
      // `Origin: null` (a sandboxed frame, a file:// page) is no URL: cross-origin, refused.
      const sameOrigin = !origin || (URL.canParse(origin) && new URL(origin).host === c.req.header('host'));
      let channel: ReturnType<typeof openUiChannel> | undefined;
      let flow: ReturnType<typeof socketFlow> | undefined;
      return {
        onOpen(_evt, ws) {
          if (!sameOrigin) return ws.close(4403, 'cross-origin connection refused');
          if (!authorised) return ws.close(4401, 'not authorised: open the link corral serve printed');
          const socket = ws.raw as (SendBuffer & { terminate(): void }) | undefined;
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
          );
        },
        onMessage(evt) {
          if (typeof evt.data === 'string') channel?.onMessage(evt.data);
        },
        onClose() {
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
    const token = c.req.query('token');
    if (token === undefined) return next();
    const url = new URL(c.req.url);
    url.searchParams.delete('token');
    if (!keyMatches(token, opts.apiKey)) {
      return c.text('That link has a wrong or old key. Open the link `corral serve` printed last.', 401);
    }
    setCookie(c, UI_COOKIE, cookie, { httpOnly: true, sameSite: 'Strict', path: '/', maxAge: 60 * 60 * 24 * 365 });
    return c.redirect(`${url.pathname}${url.search}`, 303);
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

