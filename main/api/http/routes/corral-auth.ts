import { Hono } from 'hono';
import type { ServerAuth } from '../ui-auth';

/**
 * Corral's own credential endpoints (API key required, like all of /v1):
 * - `POST /v1/corral/ui_link` mints a one-time link for the window (`{url, expires_at}`), so a
 *   running `serve` can hand out a fresh link without printing or sharing the key;
 * - `POST /v1/corral/api_key/rotate` replaces the API key (written to DATA/api-key), returns the
 *   new one this once, and ends every window session and unused link.
 */
export function corralAuthRoutes(auth: ServerAuth, keyFile: string | undefined): Hono {
  const app = new Hono();
  app.post('/ui_link', (c) => {
    const { code, expiresAt } = auth.mintCode();
    const url = new URL('/', c.req.url);
    url.searchParams.set('code', code);
    return c.json({ type: 'ui_link', url: url.toString(), expires_at: expiresAt.toISOString() });
  });
  app.post('/api_key/rotate', (c) => {
    const key = auth.rotate();
    return c.json({ type: 'api_key', api_key: key, ...(keyFile ? { key_file: keyFile } : {}), note: 'shown once; every window session and link made with the old key has ended' });
  });
  return app;
}
