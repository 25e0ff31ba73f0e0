import type { Host } from '../../../host';
import { environmentToApi } from '../../http/routes/environments';
import { normalizeEnvironmentConfig } from '../../http/schemas/environments';
import { applyMetadataPatch } from '../../http/schemas/common';
import { agentDefinitionFromCreate, agentToApi, applyAgentUpdate } from '../../http/shapes/agent';
import type { UiAgent, UiEnvironment } from '../contract';
import type { HostCalls } from '../service';
import { missing, refuse } from './errors';

type CatalogCalls = Pick<
  HostCalls,
  'listAgents' | 'createAgent' | 'updateAgent' | 'archiveAgent' | 'listEnvironments' | 'createEnvironment' | 'updateEnvironment' | 'archiveEnvironment'
>;

/** Agents and environments, made and changed in the window as through `/v1/agents` and `/v1/environments`. */
export function catalogCalls(host: Pick<Host, 'agents' | 'environments'> & { hands?: Pick<Host['hands'], 'pool'> }): CatalogCalls {
  const agent = (a: Parameters<typeof agentToApi>[0]) => agentToApi(a) as UiAgent;
  const env = (e: Parameters<typeof environmentToApi>[0]) => environmentToApi(e) as UiEnvironment;
  // The window's list shows each environment's warm pool as it is now.
  const withPool = (e: UiEnvironment): UiEnvironment => {
    const p = host.hands?.pool.state().find((s) => s.environment_id === e.id);
    if (!p) return e;
    const { environment_id: _id, name: _name, ...pool } = p;
    return { ...e, corral_pool: pool };
  };
  const mustAgent = (id: string) => host.agents.get(id) ?? (() => { throw missing('agent', id); })();
  const mustEnv = (id: string) => host.environments.get(id) ?? (() => { throw missing('environment', id); })();
  return {
    listAgents: (i) => host.agents.list({ limit: 1000, includeArchived: i.includeArchived ?? false }).data.map(agent),
    createAgent: (body) => agent(host.agents.create(agentDefinitionFromCreate(body))),
    updateAgent: ({ agentId, update }) => {
      if (mustAgent(agentId).archived_at) throw refuse(`agent '${agentId}' is archived and cannot be updated`);
      const { version, ...change } = update;
      return agent(host.agents.update(agentId, (def) => applyAgentUpdate(def, change), version));
    },
    archiveAgent: ({ agentId }) => {
      mustAgent(agentId);
      return agent(host.agents.archive(agentId)!);
    },
    listEnvironments: (i) => host.environments.list({ limit: 1000, includeArchived: i.includeArchived ?? false }).data.map((e) => withPool(env(e))),
    createEnvironment: (body) =>
      env(
        host.environments.create({
          name: body.name,
          description: body.description ?? null,
          metadata: body.metadata ?? {},
          config: normalizeEnvironmentConfig(body.config),
          scope: body.scope ?? 'organization',
        }),
      ),
    updateEnvironment: ({ environmentId, update }) => {
      const current = mustEnv(environmentId);
      if (current.archived_at) throw refuse(`environment '${environmentId}' is archived and cannot be updated`);
      const currentType = (current.record.config as { type: string }).type;
      if (update.config && update.config.type !== currentType) throw refuse(`config.type cannot change from '${currentType}' to '${update.config.type}'`);
      return env(
        host.environments.update(environmentId, (def) => ({
          ...def,
          ...(update.name != null ? { name: update.name } : {}),
          ...(update.description !== undefined ? { description: update.description } : {}),
          ...(update.scope != null ? { scope: update.scope } : {}),
          ...(update.config ? { config: normalizeEnvironmentConfig(update.config) } : {}),
          metadata: applyMetadataPatch(def.metadata as Record<string, string>, update.metadata),
        }))!,
      );
    },
    archiveEnvironment: ({ environmentId }) => {
      mustEnv(environmentId);
      return env(host.environments.archive(environmentId)!);
    },
  };
}
