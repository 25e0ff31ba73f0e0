import { Hono } from 'hono';
import type { Host } from '../../../host';
import { listSshConfigHosts } from '../../../hands/ssh';
import { attachBody, handOverBody } from '../schemas/hands';
import { jsonBody } from '../request';

/**
 * Corral's own endpoints for a session's hands: list them, attach another environment's hand,
 * release one, hand one over (live) to another session. The rules live in the hand registry;
 * this only translates HTTP.
 */
export function handRoutes(host: Host): Hono {
  const app = new Hono();
  const { log, hands } = host;

  app.get('/:id/hands', (c) => c.json({ data: hands.list(c.req.param('id')) }));

  app.post('/:id/hands', async (c) => {
    const id = c.req.param('id');
    log.getSession(id); // an unknown session is a 404 before its body is judged
    const body = await jsonBody(c, attachBody);
    hands.attach(id, body.environment_id, body.name);
    return c.json({ data: hands.list(id) });
  });

  app.delete('/:id/hands/:name', async (c) => {
    const id = c.req.param('id');
    await hands.release(id, c.req.param('name'));
    return c.json({ data: hands.list(id) });
  });

  app.post('/:id/hands/:name/hand_over', async (c) => {
    const id = c.req.param('id');
    const name = c.req.param('name');
    log.getSession(id);
    const body = await jsonBody(c, handOverBody);
    hands.handOver(id, name, body.to_session_id, body.as ?? name);
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
