import { isDeepStrictEqual } from 'node:util';
import { Hono } from 'hono';
import type { Host } from '../../../host';
import type { SessionStatus } from '../../../session/types';
import { applyMetadataPatch } from '../schemas/common';
import { sessionCreateBody, sessionForkBody, sessionUpdateBody } from '../schemas/sessions';
import { checkMcp, normalizeTools } from '../shapes/agent';
import { sessionToApi } from '../shapes/session';
import { checkVaultIds, createSessionFromBody } from '../shapes/session-create';
import { ApiError, clip, notFound } from '../errors';
import { jsonBody, queryBool, queryEnum, queryInt, queryList, queryTime } from '../request';

const STATUSES: readonly SessionStatus[] = ['rescheduling', 'running', 'idle', 'terminated'];

/** `/v1/sessions`: create, retrieve, update, list, delete, archive; and Corral's fork. */
export function sessionRoutes(host: Host): Hono {
  const app = new Hono();
  const { log } = host;

  app.post('/', async (c) => {
    const body = await jsonBody(c, sessionCreateBody);
    const session = createSessionFromBody(host, body);
    return c.json(sessionToApi(session));
  });

  app.get('/', (c) => {
    const page = log.listSessions({
      limit: queryInt(c, 'limit', { min: 1, max: 1000, fallback: 20 })!,
      page: c.req.query('page'),
      order: queryEnum(c, 'order', ['asc', 'desc'] as const),
      includeArchived: queryBool(c, 'include_archived'),
      agentId: c.req.query('agent_id') || undefined,
      agentVersion: queryInt(c, 'agent_version', { min: 1, max: 2 ** 31 }),
      statuses: queryList(c, 'statuses')?.map((s) => {
        if (!(STATUSES as string[]).includes(s)) throw new ApiError('invalid_request_error', `statuses: unknown status '${s}'`);
        return s as SessionStatus;
      }),
      createdGt: queryTime(c, 'created_at[gt]'),
      createdGte: queryTime(c, 'created_at[gte]'),
      createdLt: queryTime(c, 'created_at[lt]'),
      createdLte: queryTime(c, 'created_at[lte]'),
    });
    const data = page.data.map(sessionToApi);
    return c.json({ data, next_page: page.next_page, prev_page: page.prev_page });
  });

  app.get('/:id', (c) => c.json(sessionToApi(log.getSession(c.req.param('id')))));

  app.post('/:id', async (c) => {
    const id = c.req.param('id');
    log.getSession(id);
    const body = await jsonBody(c, sessionUpdateBody);
    checkVaultIds(host, body.vault_ids);
    const changed: Record<string, unknown> = {};
    const row = log.updateSessionRecord(id, (r) => {
      const next = { ...r };
      // Only what differs is changed and logged: a repeated update is no event (nor a wake-up).
      const set = (field: string, value: unknown) => {
        if (!isDeepStrictEqual(r[field], value)) next[field] = changed[field] = value;
      };
      if (body.title !== undefined) set('title', body.title);
      if (body.metadata !== undefined) set('metadata', applyMetadataPatch((r.metadata ?? {}) as Record<string, string>, body.metadata));
      if (body.vault_ids !== undefined) set('vault_ids', body.vault_ids);
      if (body.budget !== undefined) set('budget', body.budget);
      if (body.agent) {
        const agent = { ...(r.agent as Record<string, unknown>) };
        if (body.agent.tools) agent.tools = normalizeTools(body.agent.tools);
        if (body.agent.mcp_servers) agent.mcp_servers = body.agent.mcp_servers;
        set('agent', checkMcp(agent));
      }
      return Object.keys(changed).length > 0 ? next : undefined;
    });
    // The log is the truth: record what changed as an event too.
    if (Object.keys(changed).length > 0) log.emitEvent(id, { type: 'session.updated', ...changed });
    return c.json(sessionToApi(log.getSession(row.id)));
  });

  app.delete('/:id', (c) => {
    const id = c.req.param('id');
    log.deleteSession(id);
    return c.json({ id, type: 'session_deleted' });
  });

  app.post('/:id/archive', (c) => c.json(sessionToApi(log.archiveSession(c.req.param('id')))));

  app.post('/:id/fork', async (c) => {
    const id = c.req.param('id');
    const parent = log.getSession(id);
    const body = await jsonBody(c, sessionForkBody);
    let at = body.at_seq ?? parent.last_seq;
    if (body.at_event_id !== undefined) {
      const event = log.findEvent(id, body.at_event_id);
      if (!event) throw notFound('event', body.at_event_id);
      at = event.seq;
    }
    const child = await log.forkSessionPaged(id, at);
    if (body.title !== undefined) log.updateSessionRecord(child.id, (r) => ({ ...r, title: body.title }));
    return c.json(sessionToApi(log.getSession(child.id)));
  });

  // Cursor pages as the SDK's resources.list asks for them (`limit`, `page`; both used to be
  // ignored): the token is the id of the last resource shown (a 400 once that one is deleted).
  app.get('/:id/resources', (c) => {
    const row = log.getSession(c.req.param('id'));
    const limit = queryInt(c, 'limit', { min: 1, max: 1000, fallback: 20 })!;
    const all = (row.record.resources ?? []) as { id: string }[];
    const token = c.req.query('page');
    let start = 0;
    if (token) {
      const after = all.findIndex((r) => r.id === token);
      if (after < 0) throw new ApiError('invalid_request_error', `'${clip(token, 40)}' is not a page token of this session's resources`);
      start = after + 1;
    }
    const data = all.slice(start, start + limit);
    return c.json({ data, next_page: start + limit < all.length ? data[data.length - 1]!.id : null });
  });

  app.get('/:id/resources/:rid', (c) => {
    const row = log.getSession(c.req.param('id'));
    const rid = c.req.param('rid');
    const found = ((row.record.resources ?? []) as { id?: string }[]).find((r) => r.id === rid);
    if (!found) throw notFound('resource', rid);
    return c.json(found);
  });

  return app;
}
