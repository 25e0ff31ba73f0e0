/**
 * What a session's agent snapshot says about MCP: its servers (the API's Streamable HTTP URLs,
 * and Corral's stdio commands run by the host) and, per server, which tools are enabled.
 */

/** One entry of an agent's `mcp_servers`. */
export type McpServerSpec =
  | { type: 'url'; name: string; url: string }
  /** Corral: a command the host runs, speaking MCP over its stdin/stdout. */
  | { type: 'stdio'; name: string; command: string[]; env?: Record<string, string> };

/** A server the session uses, with its `mcp_toolset`'s per-tool switches. */
export interface McpServerUse {
  server: McpServerSpec;
  /** Whether a tool of this server is offered to the model. */
  enabled(tool: string): boolean;
}

interface ToolsetShape {
  type?: string;
  mcp_server_name?: string;
  default_config?: { enabled?: boolean | null };
  configs?: { name: string; enabled?: boolean | null }[];
}

/** The servers an agent snapshot uses: those an `mcp_toolset` names (the API ignores none; it refuses unreferenced ones). */
export function mcpServersOf(agent: Record<string, unknown> | undefined): McpServerUse[] {
  const servers = (Array.isArray(agent?.mcp_servers) ? agent.mcp_servers : []) as McpServerSpec[];
  const toolsets = ((Array.isArray(agent?.tools) ? agent.tools : []) as ToolsetShape[]).filter((t) => t.type === 'mcp_toolset');
  const out: McpServerUse[] = [];
  for (const server of servers) {
    const set = toolsets.find((t) => t.mcp_server_name === server.name);
    if (!set) continue;
    const defaultOn = set.default_config?.enabled ?? true;
    out.push({ server, enabled: (tool) => set.configs?.find((c) => c.name === tool)?.enabled ?? defaultOn });
  }
  return out;
}

/** Where a server is, for the ledger and messages (never a secret: stdio env values are left out). */
export function serverTarget(server: McpServerSpec): string {
  return server.type === 'url' ? server.url : `stdio:${server.command[0] ?? ''}`;
}
