import { Hono } from 'hono';
import { z } from 'zod';
import type { Host } from '../../../host';
import { sessionHandSpecs } from '../../../hands/session-hands';
import { listSshConfigHosts } from '../../../hands/ssh';
import { ApiError, notFound } from '../errors';
import { jsonBody } from '../request';

const handName = z.string().regex(/^[a-z][a-z0-9_-]{0,31}$/, 'hand names are 1-32 lower-case letters, digits, _ or -, starting with a letter');
const attachBody = z.object({ environment_id: z.string().min(1), name: handName }).strict();
const handOverBody = z.object({ to_session_id: z.string().min(1), as: handName.optional() }).strict();

/**
 * Corral's own endpoints for a session's hands: list them, attach another environment's hand,
 * release one, hand one over (live) to another session.
 */
export function handRoutes(host: Host): Hono {
  const app = new Hono();
  const { log, hands } = host;
  const specs = (id: string) => sessionHandSpecs(log, host.environments, id);

  app.get('/:id/hands', (c) => {
    const id = c.req.param('id');
    log.getSession(id);
    return c.json({ data: hands.list(id) });
  });

  app.post('/:id/hands', async (c) => {
    const id = c.req.param('id');
    log.getSession(id);
    const body = await jsonBody(c, attachBody);
    const env = host.environments.get(body.environment_id);
    if (!env) throw notFound('environment', body.environment_id);
    if (env.archived_at) throw new ApiError('invalid_request_error', `environment '${env.id}' is archived`);
    if (specs(id).some((h) => h.name === body.name)) throw new ApiError('invalid_request_error', `the session already has a hand named '${body.name}'`);
    hands.attach(id, env.id, body.name);
    return c.json({ data: hands.list(id) });
  });

  app.delete('/:id/hands/:name', async (c) => {
    const id = c.req.param('id');
    const name = c.req.param('name');
    log.getSession(id);
    if (!specs(id).some((h) => h.name === name)) throw notFound('hand', name);
    await hands.release(id, name);
    return c.json({ data: hands.list(id) });
  });

  app.post('/:id/hands/:name/hand_over', async (c) => {
    const id = c.req.param('id');
    const name = c.req.param('name');
    log.getSession(id);
    const body = await jsonBody(c, handOverBody);
    log.getSession(body.to_session_id);
    if (!specs(id).some((h) => h.name === name)) throw notFound('hand', name);
    try {
      hands.handOver(id, name, body.to_session_id, body.as ?? name);
    } catch (err) {
      throw new ApiError('invalid_request_error', (err as Error).message);
    }
    return c.json({ from: hands.list(id), to: hands.list(body.to_session_id) });
  });

  return app;
}

/** `GET /v1/hands/ssh_config_hosts`: hosts from the user's ~/.ssh/config, to offer as SSH hands. */
export function handCatalogRoutes(): Hono {
  const app = new Hono();
  app.get('/ssh_config_hosts', async (c) => c.json({ data: await listSshConfigHosts() }));
  return app;
}
