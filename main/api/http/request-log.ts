import type { MiddlewareHandler } from 'hono';
import type { Logger } from '../../logging/logger';
import { clip } from './errors';

/**
 * Logs each request when its response is ready: method, path (never the query, which can carry
 * the UI's `token`), status, time in ms and request id. Never headers or bodies. A streamed
 * response (SSE) is logged when its headers go out, not when the stream ends.
 */
export function requestLog(logger: Logger): MiddlewareHandler {
  return async (c, next) => {
    const started = performance.now();
    await next();
    const status = c.res.status;
    const fields = {
      req_id: c.get('requestId' as never) as string | undefined,
      method: c.req.method,
      path: clip(c.req.path, 300),
      status,
      ms: Math.round((performance.now() - started) * 10) / 10,
    };
    if (status >= 500) logger.error(fields, 'request');
    else logger.info(fields, 'request');
  };
}
