import { BUILTIN_TOOL_NAMES, type ToolDefinition } from '../hands/tools/definitions';
import { permissionsOf, type Permissions } from './permissions';
import { SERVER_TOOL_NAMES } from './server-tools';
import type { ModelOptions } from './context';

/** Corral's own tool: the model reads its session's log, e.g. tool results elided from a request. */
export const READ_SESSION_TOOL: ToolDefinition = {
  name: 'read_session_events',
  description:
    'Read events of this session from its durable log by position (seq). Use it to see tool results that were elided from your context, or to look back at what happened. Returns one JSON event per line.',
  input_schema: {
    type: 'object',
    properties: {
      from: { type: 'integer', minimum: 1, description: 'first position to return' },
      to: { type: 'integer', minimum: 1, description: 'last position to return' },
      before: { type: 'integer', minimum: 1, description: 'return the events just before this position' },
      types: { type: 'array', items: { type: 'string' }, description: 'only these event types, e.g. ["agent.tool_result"]' },
      limit: { type: 'integer', minimum: 1, maximum: 200, description: 'at most this many events (default 20)' },
    },
  },
};

/** What the harness needs of the session's agent snapshot. */
export interface AgentConfig {
  model: string;
  /** The model config's effort, speed and inference_geo, as Messages API parameters. */
  modelOptions: ModelOptions;
  system: string | null;
  maxTokens: number;
  contextWindowTokens: number;
  /** Built-in tools the agent enables (names of the hand's tools). */
  builtinTools: string[];
  /** The model provider's tools the agent enables (web_search, web_fetch): offered, never run here. */
  serverTools: string[];
  /** Tools the client runs itself (`agent.custom_tool_use` → `user.custom_tool_result`). */
  customTools: ToolDefinition[];
  /** The agent has MCP servers an `mcp_toolset` uses (their tools come from the host). */
  usesMcp: boolean;
  /** Permission policies of the toolset's tools. */
  permissions: Permissions;
}


interface ToolsetShape {
  type: string;
  name?: string;
  description?: string;
  input_schema?: Record<string, unknown>;
  default_config?: { enabled?: boolean };
  configs?: { name: string; enabled?: boolean }[];
}

/** Reads the agent snapshot a session carries (the API's agent object, plus Corral's limits). */
export function agentConfigOf(agent: Record<string, unknown> | undefined): AgentConfig {
  const model = (agent?.model as { id?: string } | undefined)?.id ?? 'claude-sonnet-4-5';
  const tools = (Array.isArray(agent?.tools) ? agent.tools : []) as ToolsetShape[];
  const builtin = new Set<string>();
  const server = new Set<string>();
  const custom: ToolDefinition[] = [];
  for (const t of tools) {
    if (t.type === 'agent_toolset_20260401') {
      const defaultOn = t.default_config?.enabled ?? true;
      for (const name of BUILTIN_TOOL_NAMES) {
        const cfg = t.configs?.find((c) => c.name === name);
        if (cfg?.enabled ?? defaultOn) builtin.add(name);
      }
      for (const name of SERVER_TOOL_NAMES) {
        const cfg = t.configs?.find((c) => c.name === name) as { enabled?: boolean; permission_policy?: { type?: string } | null } | undefined;
        // The provider runs these the moment the model asks: Corral cannot hold one for the
        // user, so under always_ask it is not offered at all (said in the README).
        const policy = cfg?.permission_policy?.type ?? (t.default_config as { permission_policy?: { type?: string } | null } | undefined)?.permission_policy?.type;
        if ((cfg?.enabled ?? defaultOn) && policy !== 'always_ask') server.add(name);
      }
    } else if (t.type === 'custom' && t.name) {
      custom.push({ name: t.name, description: t.description ?? '', input_schema: (t.input_schema ?? { type: 'object' }) as ToolDefinition['input_schema'] });
    }
  }
  const num = (v: unknown, fallback: number) => (typeof v === 'number' && Number.isInteger(v) && v > 0 ? v : fallback);
  return {
    model,
    modelOptions: modelOptionsOf(agent?.model),
    system: typeof agent?.system === 'string' ? agent.system : null,
    maxTokens: num(agent?.max_tokens, 8192),
    contextWindowTokens: num(agent?.context_window_tokens, 200_000),
    builtinTools: BUILTIN_TOOL_NAMES.filter((n) => builtin.has(n)),
    serverTools: SERVER_TOOL_NAMES.filter((n) => server.has(n)),
    customTools: custom,
    usesMcp: Array.isArray(agent?.mcp_servers) && agent.mcp_servers.length > 0 && tools.some((t) => t.type === 'mcp_toolset'),
    permissions: permissionsOf(tools),
  };
}

/** The agent's model config (`{id, effort: {type}, speed, inference_geo}`) as Messages API parameters. */
function modelOptionsOf(model: unknown): ModelOptions {
  const m = (typeof model === 'object' && model !== null ? model : {}) as { effort?: { type?: unknown } | string; speed?: unknown; inference_geo?: unknown };
  const effort = typeof m.effort === 'string' ? m.effort : m.effort?.type;
  return {
    ...(typeof effort === 'string' ? { output_config: { effort } } : {}),
    ...(typeof m.speed === 'string' ? { speed: m.speed } : {}),
    ...(typeof m.inference_geo === 'string' ? { inference_geo: m.inference_geo } : {}),
  };
}
