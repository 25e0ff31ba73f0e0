import { Hono } from 'hono';
import type { Host } from '../../../host';
import { agentDefinitionFromCreate, agentToApi, applyAgentUpdate } from '../shapes/agent';
import { agentCreateBody, agentUpdateBody } from '../schemas/agents';
import { ApiError, notFound } from '../errors';
import { jsonBody, queryBool, queryInt, queryTime } from '../request';

/** `/v1/agents`: create, retrieve (any version), update (new version), list, archive, versions. */
export function agentRoutes(host: Host): Hono {
  const app = new Hono();
  const mustGet = (id: string, version?: number) => {
    const agent = host.agents.get(id, version);
    if (!agent) throw version === undefined ? notFound('agent', id) : notFound('agent version', `${id}@${version}`);
    return agent;
  };

  app.post('/', async (c) => {
    const body = await jsonBody(c, agentCreateBody);
    return c.json(agentToApi(host.agents.create(agentDefinitionFromCreate(body))));
  });

  app.get('/', (c) => {
    const page = host.agents.list({
      limit: queryInt(c, 'limit', { min: 1, max: 1000, fallback: 20 })!,
      page: c.req.query('page'),
      includeArchived: queryBool(c, 'include_archived'),
      createdGte: queryTime(c, 'created_at[gte]'),
      createdLte: queryTime(c, 'created_at[lte]'),
    });
    return c.json({ data: page.data.map(agentToApi), next_page: page.next_page });
  });

  app.get('/:id', (c) => c.json(agentToApi(mustGet(c.req.param('id'), queryInt(c, 'version', { min: 1, max: 2 ** 31 })))));

  app.post('/:id', async (c) => {
    const id = c.req.param('id');
    const current = mustGet(id);
    const body = await jsonBody(c, agentUpdateBody);
    if (current.archived_at) {
      throw new ApiError('invalid_request_error', `agent '${id}' is archived and cannot be updated`, { error_code: 'agent_archived' });
    }
    const { version, ...change } = body;
    return c.json(agentToApi(host.agents.update(id, (def) => applyAgentUpdate(def, change), version)));
  });

  app.post('/:id/archive', (c) => {
    const id = c.req.param('id');
    mustGet(id);
    return c.json(agentToApi(host.agents.archive(id)!));
  });

  app.get('/:id/versions', (c) => {
    const id = c.req.param('id');
    mustGet(id);
    const limit = queryInt(c, 'limit', { min: 1, max: 1000, fallback: 20 })!;
    const below = c.req.query('page') ? Number(c.req.query('page')) : Infinity;
    if (Number.isNaN(below)) throw new ApiError('invalid_request_error', `'${c.req.query('page')}' is not a page token from this server`);
    const all = host.agents.versions(id).filter((v) => v.version < below);
    const data = all.slice(0, limit);
    return c.json({ data: data.map(agentToApi), next_page: all.length > limit ? String(data[data.length - 1]!.version) : null });
  });

  return app;
}
