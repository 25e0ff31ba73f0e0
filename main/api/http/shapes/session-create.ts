import type { z } from 'zod';
import type { Host } from '../../../host';
import type { SessionRow } from '../../../session/types';
import { ApiError, notFound } from '../errors';
import { newOutcomeId } from '../ids';
import { toLoggedInput } from '../schemas/events';
import type { sessionCreateBody } from '../schemas/sessions';
import { normalizeResources, resolveSessionAgent } from './session';

/**
 * Creates a session from a validated `POST /v1/sessions` body: the agent (pinned version and
 * overrides), the environment, resources and initial events. The HTTP route and the window's
 * "New session" both come through here, so both refuse the same things the same way.
 */
export function createSessionFromBody(host: Pick<Host, 'log' | 'agents' | 'environments' | 'vault'>, body: z.infer<typeof sessionCreateBody>): SessionRow {
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
      "resources[].authorization_token is not accepted: Corral keeps credentials only in its vault. Store the token as a git_token credential (auth.repository_urls or auth.hosts naming this repository) in one of the session's vault_ids: the repository is then cloned and reached through the host's git proxy, which adds the token",
    );
  }
  // Refused rather than stored: a resource that is never applied would surprise the agent.
  const unbuilt = (body.resources ?? []).findIndex((r) => r.type === 'file' || r.type === 'memory_store');
  if (unbuilt >= 0) {
    const type = body.resources![unbuilt]!.type;
    const what = type === 'file' ? 'the Files API' : 'memory stores';
    throw new ApiError('invalid_request_error', `resources[${unbuilt}]: '${type}' resources are not supported yet (${what} not built in Corral); repositories are`);
  }
  const resources = normalizeResources(body.resources ?? []);
  // As POST …/resources refuses it: two repositories cloned to one folder.
  for (const [i, r] of resources.entries()) {
    const j = resources.findIndex((o) => o.mount_path === r.mount_path);
    if (j < i) throw new ApiError('invalid_request_error', `resources[${i}].mount_path: '${String(r.mount_path)}' is already used by resources[${j}]; give one of them another mount_path`);
  }
  const { session } = host.log.createSession(
    {
      agent_id: agent.id,
      agent_version: agent.version,
      environment_id: env.id,
      record: {
        agent: resolveSessionAgent(body.agent, agent),
        title: body.title ?? null,
        metadata: body.metadata ?? {},
        resources,
        vault_ids: body.vault_ids ?? [],
        budget: body.budget ?? null,
      },
    },
    (body.initial_events ?? []).map((e) => toLoggedInput(e, newOutcomeId)),
  );
  return session;
}

/** A session may use the credentials of the vaults it names: they must exist and not be archived. */
export function checkVaultIds(host: Pick<Host, 'vault'>, ids: readonly string[] | undefined): void {
  for (const [i, id] of (ids ?? []).entries()) {
    const vault = host.vault.getVault(id);
    if (!vault) throw notFound('vault', id);
    if (vault.archived_at) throw new ApiError('invalid_request_error', `vault_ids[${i}]: vault '${id}' is archived; sessions cannot use it`);
    if (ids!.indexOf(id) !== i) throw new ApiError('invalid_request_error', `vault_ids[${i}]: vault '${id}' is named twice`);
  }
}
