import { BUILTIN_TOOL_NAMES } from '../hands/tools/definitions';

/** A resolved permission policy (Corral refuses `auto` at the door, see schemas/common.ts). */
export type PolicyName = 'always_allow' | 'always_ask';

/** Who may run which tool without asking, from the agent's toolset configs. */
export interface Permissions {
  /** Policy of each built-in tool the toolset names or covers. */
  byTool: Record<string, PolicyName>;
  /** The toolset's default policy (tools a hand adds beyond the built-ins get it). */
  toolsetDefault: PolicyName;
  /** Per MCP server (its `mcp_toolset`): the default, and tools' own policies by their MCP name. */
  mcp?: Record<string, { toolsetDefault: PolicyName; byTool: Record<string, PolicyName> }>;
}

interface PolicyShape {
  type?: string;
}
interface ToolsetShape {
  type: string;
  mcp_server_name?: string;
  default_config?: { permission_policy?: PolicyShape | null } | null;
  configs?: { name: string; permission_policy?: PolicyShape | null }[];
}

const policyOf = (p: PolicyShape | null | undefined, fallback: PolicyName): PolicyName =>
  p?.type === 'always_ask' ? 'always_ask' : p?.type === 'always_allow' ? 'always_allow' : fallback;

/**
 * Reads permission policies from the agent's tools: a tool's own config wins, then the toolset's
 * `default_config`, then the API's default: `always_allow` for the agent toolset, `always_ask`
 * for an MCP toolset (a tool a server adds later must not run unasked).
 */
export function permissionsOf(list: readonly { type: string }[]): Permissions {
  const tools = list as readonly ToolsetShape[];
  const byTool: Record<string, PolicyName> = {};
  let toolsetDefault: PolicyName = 'always_allow';
  const mcp: NonNullable<Permissions['mcp']> = {};
  for (const t of tools) {
    if (t.type === 'mcp_toolset' && t.mcp_server_name) {
      const def = policyOf(t.default_config?.permission_policy, 'always_ask');
      const byName: Record<string, PolicyName> = {};
      for (const c of t.configs ?? []) byName[c.name] = policyOf(c.permission_policy, def);
      mcp[t.mcp_server_name] = { toolsetDefault: def, byTool: byName };
    }
    if (t.type !== 'agent_toolset_20260401') continue;
    toolsetDefault = policyOf(t.default_config?.permission_policy, 'always_allow');
    for (const name of BUILTIN_TOOL_NAMES) {
      const cfg = t.configs?.find((c) => c.name === name);
      byTool[name] = policyOf(cfg?.permission_policy, toolsetDefault);
    }
  }
  return { byTool, toolsetDefault, mcp };
}

/** The API's `evaluated_permission` and `evaluation` of one `agent.tool_use`. */
export type Evaluation =
  | { evaluated_permission: 'allow'; evaluation: { type: 'always_allow' } }
  | { evaluated_permission: 'ask'; evaluation: { type: 'always_ask' } }
  /** Refused before any policy applied: the tool was not offered (the API then omits `evaluation`). */
  | { evaluated_permission: 'deny' };

/**
 * Judges a call the model made. A model can name any tool, offered or not: a name that was not
 * offered in the request (not enabled for the agent, or unknown) is denied and never run.
 * `alwaysAllowed` are Corral's own tools that only read the session's log.
 */
export function evaluateCall(name: string, offered: ReadonlySet<string>, perms: Permissions, alwaysAllowed: ReadonlySet<string>): Evaluation {
  if (!offered.has(name)) return { evaluated_permission: 'deny' };
  if (alwaysAllowed.has(name)) return { evaluated_permission: 'allow', evaluation: { type: 'always_allow' } };
  const policy = perms.byTool[name] ?? perms.toolsetDefault;
  return policy === 'always_ask' ? { evaluated_permission: 'ask', evaluation: { type: 'always_ask' } } : { evaluated_permission: 'allow', evaluation: { type: 'always_allow' } };
}

/**
 * Judges a call to an MCP server's tool (it was offered: the brain knows it by its model-facing
 * name). Policies come from the server's `mcp_toolset`; without one, the API's `always_ask`.
 */
export function evaluateMcpCall(server: string, tool: string, perms: Permissions): Evaluation {
  const own = perms.mcp?.[server];
  const policy = own ? (own.byTool[tool] ?? own.toolsetDefault) : 'always_ask';
  return policy === 'always_ask' ? { evaluated_permission: 'ask', evaluation: { type: 'always_ask' } } : { evaluated_permission: 'allow', evaluation: { type: 'always_allow' } };
}

/** The error result a call to a tool that was not offered gets (the model sees it). */
export const notAvailableText = (name: string) =>
  `Not run: the tool '${name}' is not available in this session (it is not enabled for this agent). Use one of the tools you were given.`;

/** The error result of a call the user denied. */
export const deniedText = (message: string | null | undefined) =>
  `Not run: the user denied this tool call.${message ? ` Reason: ${message}` : ''}`;
