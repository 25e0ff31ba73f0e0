import type { z } from 'zod';
import type { AgentRecord, AgentDefinition } from '../../../catalog/agents';
import type { AgentCreateBody, AgentUpdateBody, modelParam, toolParam } from '../schemas/agents';
import { applyMetadataPatch } from '../schemas/common';
import { ApiError } from '../errors';
import { mcpReferenceProblem } from '../../../mcp/references';

/** Refuses an agent (or a session's agent snapshot) whose MCP servers and toolsets do not match (see mcp/references.ts). */
export function checkMcp<D extends { mcp_servers?: unknown; tools?: unknown }>(def: D): D {
  const problem = mcpReferenceProblem((def.mcp_servers ?? []) as { name: string }[], (def.tools ?? []) as { type: string; mcp_server_name?: string }[]);
  if (problem) throw new ApiError('invalid_request_error', problem);
  return def;
}

const ALLOW = { type: 'always_allow' } as const;
const ASK = { type: 'always_ask' } as const;

/** `'claude-x'` or a config object → the API's model config (`effort` as `{type}`). */
export function normalizeModel(model: z.infer<typeof modelParam>): Record<string, unknown> {
  if (typeof model === 'string') return { id: model };
  const out: Record<string, unknown> = { id: model.id };
  if (model.effort) out.effort = typeof model.effort === 'string' ? { type: model.effort } : model.effort;
  if (model.inference_geo) out.inference_geo = model.inference_geo;
  if (model.speed) out.speed = model.speed;
  return out;
}

/** Fills the defaults the API reports for toolsets (enabled, always_allow). */
export function normalizeTools(tools: z.infer<typeof toolParam>[]): Record<string, unknown>[] {
  return tools.map((tool) => {
    if (tool.type === 'custom') return { ...tool };
    const def = {
      enabled: tool.default_config?.enabled ?? true,
      // The API's defaults: the agent toolset runs unasked, an MCP server's tools ask first.
      permission_policy: tool.default_config?.permission_policy ?? (tool.type === 'mcp_toolset' ? ASK : ALLOW),
    };
    const configs = (tool.configs ?? []).map((c) => ({
      ...c,
      ...(tool.type === 'agent_toolset_20260401' ? { type: c.name } : {}),
      enabled: c.enabled ?? def.enabled,
      permission_policy: c.permission_policy ?? def.permission_policy,
    }));
    return tool.type === 'mcp_toolset'
      ? { type: tool.type, mcp_server_name: tool.mcp_server_name, configs, default_config: def }
      : { type: tool.type, configs, default_config: def };
  });
}

function skills(list: AgentCreateBody['skills']): Record<string, unknown>[] {
  return (list ?? []).map((s) => ({ type: s.type, skill_id: s.skill_id, version: s.version ?? 'latest' }));
}

export function agentDefinitionFromCreate(body: AgentCreateBody): AgentDefinition {
  return checkMcp({
    name: body.name,
    description: body.description ?? null,
    execution_identity: body.execution_identity ?? { type: 'service_account' },
    mcp_servers: body.mcp_servers ?? [],
    metadata: body.metadata ?? {},
    model: normalizeModel(body.model),
    multiagent: body.multiagent ?? null,
    skills: skills(body.skills),
    system: body.system ?? null,
    tools: normalizeTools(body.tools ?? []),
    ...(body.max_tokens ? { max_tokens: body.max_tokens } : {}),
    ...(body.context_window_tokens ? { context_window_tokens: body.context_window_tokens } : {}),
  });
}

/** Applies an update: omitted fields stay, `null` clears (lists become empty). */
export function applyAgentUpdate(current: AgentDefinition, body: AgentUpdateBody): AgentDefinition {
  const next = { ...current };
  if (body.name !== undefined) next.name = body.name;
  if (body.model !== undefined) next.model = normalizeModel(body.model);
  if (body.description !== undefined) next.description = body.description;
  if (body.execution_identity !== undefined) next.execution_identity = body.execution_identity ?? { type: 'service_account' };
  if (body.mcp_servers !== undefined) next.mcp_servers = body.mcp_servers ?? [];
  if (body.multiagent !== undefined) next.multiagent = body.multiagent;
  if (body.skills !== undefined) next.skills = skills(body.skills ?? []);
  if (body.system !== undefined) next.system = body.system;
  if (body.tools !== undefined) next.tools = normalizeTools(body.tools ?? []);
  if (body.max_tokens !== undefined) next.max_tokens = body.max_tokens ?? undefined;
  if (body.context_window_tokens !== undefined) next.context_window_tokens = body.context_window_tokens ?? undefined;
  if (body.metadata !== undefined) next.metadata = applyMetadataPatch(current.metadata as Record<string, string>, body.metadata);
  return checkMcp(next);
}

/** The API's agent object. */
export function agentToApi(a: AgentRecord): Record<string, unknown> {
  return {
    type: 'agent',
    id: a.id,
    version: a.version,
    ...a.record,
    created_at: a.created_at,
    updated_at: a.updated_at,
    archived_at: a.archived_at,
  };
}

/** The agent snapshot a session carries (no metadata or timestamps). */
export function sessionAgentSnapshot(a: AgentRecord): Record<string, unknown> {
  const { metadata: _m, ...def } = a.record;
  return { type: 'agent', id: a.id, version: a.version, ...def };
}
