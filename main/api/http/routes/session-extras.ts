import { Hono } from 'hono';
import type { Host } from '../../../host';
import { modelRequestAt } from '../../ui/calls/model-request';
import { sessionToApi } from '../shapes/session';
import { queryEnum, queryInt } from '../request';

/**
 * Corral's read-only additions for a session: the model request the brain would build from
 * its log up to a position (`GET /v1/sessions/{id}/model_request?at_seq=N`, default: the whole
 * log), and the sessions forked from it (`GET /v1/sessions/{id}/forks`, oldest first, a page at a
 * time as `GET /v1/sessions` pages: `limit`, `page`, `order`).
 */
export function sessionExtraRoutes(host: Host): Hono {
  const app = new Hono();
  app.get('/:id/model_request', async (c) => {
    const id = c.req.param('id');
    const session = host.log.getSession(id);
    const at = queryInt(c, 'at_seq', { min: 0, max: Number.MAX_SAFE_INTEGER }) ?? session.last_seq;
    return c.json({ type: 'model_request', ...(await modelRequestAt(host, id, at)) });
  });
  app.get('/:id/forks', (c) => {
    const id = c.req.param('id');
    host.log.getSession(id);
    // Archived forks too, as listForks gives them.
    const page = host.log.listSessions({
      parentId: id,
      includeArchived: true,
      limit: queryInt(c, 'limit', { min: 1, max: 1000, fallback: 20 })!,
      page: c.req.query('page'),
      order: queryEnum(c, 'order', ['asc', 'desc'] as const) ?? 'asc',
    });
    return c.json({ data: page.data.map(sessionToApi), next_page: page.next_page, prev_page: page.prev_page });
  });
  return app;
}
