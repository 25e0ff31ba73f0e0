import { Hono } from 'hono';
import type { Host } from '../../../host';
import type { SessionStatus } from '../../../session/types';
import { applyMetadataPatch } from '../schemas/common';
import { toLoggedInput } from '../schemas/events';
import { sessionCreateBody, sessionForkBody, sessionUpdateBody } from '../schemas/sessions';
import { normalizeTools } from '../shapes/agent';
import { normalizeResources, resolveSessionAgent, sessionToApi } from '../shapes/session';
import { newOutcomeId } from '../ids';
import { ApiError, notFound } from '../errors';
import { jsonBody, queryBool, queryEnum, queryInt, queryList, queryTime } from '../request';

const STATUSES: readonly SessionStatus[] = ['rescheduling', 'running', 'idle', 'terminated'];

/** `/v1/sessions`: create, retrieve, update, list, delete, archive; and Corral's fork. */
export function sessionRoutes(host: Host): Hono {
  const app = new Hono();
  const { log } = host;

  app.post('/', async (c) => {
    const body = await jsonBody(c, sessionCreateBody);
    const ref = typeof body.agent === 'string' ? { id: body.agent, version: undefined } : body.agent;
    const agent = host.agents.get(ref.id, ref.version);
    if (!agent) throw ref.version === undefined ? notFound('agent', ref.id) : notFound('agent version', `${ref.id}@${ref.version}`);
    if (agent.archived_at) throw new ApiError('invalid_request_error', `agent '${agent.id}' is archived; sessions cannot start with it`);
    const env = host.environments.get(body.environment_id);
    if (!env) throw notFound('environment', body.environment_id);
    if (env.archived_at) throw new ApiError('invalid_request_error', `environment '${env.id}' is archived; sessions cannot start in it`);
    checkVaultIds(host, body.vault_ids);
    const withToken = (body.resources ?? []).find((r) => r.type === 'github_repository' && r.authorization_token);
    if (withToken) {
      // Never store a credential in a session record; the vault takes these over.
      throw new ApiError(
        'invalid_request_error',
        "resources[].authorization_token is not accepted: Corral keeps credentials only in its vault. Store the token as a git_token credential in one of the session's vault_ids (its use for cloning comes with the git proxy)",
      );
    }
    // Refused rather than stored: a resource that is never applied would surprise the agent.
    const unbuilt = (body.resources ?? []).findIndex((r) => r.type === 'file' || r.type === 'memory_store');
    if (unbuilt >= 0) {
      const type = body.resources![unbuilt]!.type;
      const what = type === 'file' ? 'the Files API' : 'memory stores';
      throw new ApiError('invalid_request_error', `resources[${unbuilt}]: '${type}' resources are not supported yet (${what} not built in Corral); repositories are`);
    }
    const { session } = log.createSession(
      {
        agent_id: agent.id,
        agent_version: agent.version,
        environment_id: env.id,
        record: {
          agent: resolveSessionAgent(body.agent, agent),
          title: body.title ?? null,
          metadata: body.metadata ?? {},
          resources: normalizeResources(body.resources ?? []),
          vault_ids: body.vault_ids ?? [],
          budget: body.budget ?? null,
        },
      },
      (body.initial_events ?? []).map((e) => toLoggedInput(e, newOutcomeId)),
    );
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
      if (body.title !== undefined) next.title = changed.title = body.title;
      if (body.metadata !== undefined) next.metadata = changed.metadata = applyMetadataPatch((r.metadata ?? {}) as Record<string, string>, body.metadata);
      if (body.vault_ids !== undefined) next.vault_ids = changed.vault_ids = body.vault_ids;
      if (body.budget !== undefined) next.budget = changed.budget = body.budget;
      if (body.agent) {
        const agent = { ...(r.agent as Record<string, unknown>) };
        if (body.agent.tools) agent.tools = normalizeTools(body.agent.tools);
        if (body.agent.mcp_servers) agent.mcp_servers = body.agent.mcp_servers;
        next.agent = changed.agent = agent;
      }
      return next;
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
    const child = log.forkSession(id, at);
    if (body.title !== undefined) log.updateSessionRecord(child.id, (r) => ({ ...r, title: body.title }));
    return c.json(sessionToApi(log.getSession(child.id)));
  });

  app.get('/:id/resources', (c) => {
    const row = log.getSession(c.req.param('id'));
    return c.json({ data: (row.record.resources ?? []) as unknown[], next_page: null });
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

/** A session may use the credentials of the vaults it names: they must exist and not be archived. */
function checkVaultIds(host: Host, ids: readonly string[] | undefined): void {
  for (const [i, id] of (ids ?? []).entries()) {
    const vault = host.vault.getVault(id);
    if (!vault) throw notFound('vault', id);
    if (vault.archived_at) throw new ApiError('invalid_request_error', `vault_ids[${i}]: vault '${id}' is archived; sessions cannot use it`);
    if (ids!.indexOf(id) !== i) throw new ApiError('invalid_request_error', `vault_ids[${i}]: vault '${id}' is named twice`);
  }
}
