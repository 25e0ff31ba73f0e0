/**
 * The API's rule tying an agent's `mcp_servers` to its `mcp_toolset`s: names are unique, every
 * server is used by a toolset and every toolset names a server. Corral acts on both lists, so a
 * server no toolset uses (or a toolset naming no server) would be a field silently ignored:
 * refused instead.
 */
export function mcpReferenceProblem(servers: readonly { name: string }[], tools: readonly { type: string; mcp_server_name?: string }[]): string | undefined {
  const names = new Set<string>();
  for (const s of servers) {
    if (names.has(s.name)) return `mcp_servers: the name '${s.name}' is used twice (server names must be unique)`;
    names.add(s.name);
  }
  const used = new Set<string>();
  for (const t of tools) {
    if (t.type !== 'mcp_toolset') continue;
    const name = String(t.mcp_server_name);
    if (!names.has(name)) return `tools: the mcp_toolset names '${name}', which is not in mcp_servers`;
    if (used.has(name)) return `tools: two mcp_toolsets name '${name}'`;
    used.add(name);
  }
  for (const name of names) if (!used.has(name)) return `mcp_servers: '${name}' is not used by any mcp_toolset in tools (unreferenced servers are refused)`;
  return undefined;
}
