import { Hono } from 'hono';
import type { EnvironmentRecord } from '../../../catalog/environments';
import type { Host } from '../../../host';
import { applyMetadataPatch } from '../schemas/common';
import { environmentCreateBody, environmentUpdateBody, normalizeEnvironmentConfig } from '../schemas/environments';
import { ApiError, notFound } from '../errors';
import { jsonBody, queryBool, queryInt } from '../request';

/** The API's environment object. */
export function environmentToApi(e: EnvironmentRecord): Record<string, unknown> {
  return { type: 'environment', id: e.id, ...e.record, created_at: e.created_at, updated_at: e.updated_at, archived_at: e.archived_at };
}

/**
 * A `local` config may only name a working_dir inside the folders the host allows (by default
 * its per-session work root): anything else would let whoever holds the API reach the whole
 * machine through a hand. Refused with a 400 naming the field.
 */
function checkLocalConfig(host: Host, config: { type: string; working_dir?: unknown } | null | undefined): void {
  if (config?.type !== 'local' || config.working_dir === undefined) return;
  const problem = host.hands.workingDirProblem(config.working_dir);
  if (problem) throw new ApiError('invalid_request_error', `config.working_dir: ${problem}`, { error_code: 'working_dir_not_allowed' });
}

/** `/v1/environments`: create, retrieve, update, list, delete, archive. */
export function environmentRoutes(host: Host): Hono {
  const app = new Hono();
  const mustGet = (id: string) => host.environments.get(id) ?? (() => { throw notFound('environment', id); })();

  app.post('/', async (c) => {
    const body = await jsonBody(c, environmentCreateBody);
    checkLocalConfig(host, body.config);
    const created = host.environments.create({
      name: body.name,
      description: body.description ?? null,
      metadata: body.metadata ?? {},
      config: normalizeEnvironmentConfig(body.config),
      scope: body.scope ?? 'organization',
    });
    return c.json(environmentToApi(created));
  });

  app.get('/', (c) => {
    const page = host.environments.list({
      limit: queryInt(c, 'limit', { min: 1, max: 1000, fallback: 20 })!,
      page: c.req.query('page'),
      includeArchived: queryBool(c, 'include_archived'),
    });
    return c.json({ data: page.data.map(environmentToApi), next_page: page.next_page });
  });

  app.get('/:id', (c) => c.json(environmentToApi(mustGet(c.req.param('id')))));

  app.post('/:id', async (c) => {
    const id = c.req.param('id');
    const current = mustGet(id);
    const body = await jsonBody(c, environmentUpdateBody);
    if (current.archived_at) {
      throw new ApiError('invalid_request_error', `environment '${id}' is archived and cannot be updated`, { error_code: 'environment_archived' });
    }
    checkLocalConfig(host, body.config);
    const currentType = (current.record.config as { type: string }).type;
    if (body.config && body.config.type !== currentType) {
      throw new ApiError('invalid_request_error', `config.type cannot change from '${currentType}' to '${body.config.type}'`, {
        error_code: 'invalid_config_type_change',
      });
    }
    const updated = host.environments.update(id, (def) => ({
      ...def,
      ...(body.name != null ? { name: body.name } : {}),
      ...(body.description !== undefined ? { description: body.description } : {}),
      ...(body.scope != null ? { scope: body.scope } : {}),
      ...(body.config ? { config: normalizeEnvironmentConfig(body.config) } : {}),
      metadata: applyMetadataPatch(def.metadata as Record<string, string>, body.metadata),
    }));
    return c.json(environmentToApi(updated!));
  });

  app.delete('/:id', (c) => {
    const id = c.req.param('id');
    if (!host.environments.delete(id)) throw notFound('environment', id);
    return c.json({ id, type: 'environment_deleted' });
  });

  app.post('/:id/archive', (c) => {
    const id = c.req.param('id');
    mustGet(id);
    return c.json(environmentToApi(host.environments.archive(id)!));
  });

  return app;
}
