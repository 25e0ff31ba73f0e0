import { Hono } from 'hono';
import type { Host } from '../../../host';
import { CORRAL_VERSION } from '../../../version';

/**
 * `GET /health`, without a key: whether the server answers, for scripts and the desktop shell.
 * Says nothing a caller without the key should not know (no paths, no keys, no sessions).
 */
export function healthRoutes(host: Host): Hono {
  const app = new Hono();
  const startedAt = Date.now();
  app.get('/', (c) =>
    c.json({
      status: 'ok',
      version: CORRAL_VERSION,
      uptime_s: Math.round((Date.now() - startedAt) / 1000),
      brains: host.brains ? 'on' : 'off',
    }),
  );
  return app;
}
