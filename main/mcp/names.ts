/**
 * How MCP tools appear to the model, shared by the host (which lists them) and the brain (which
 * offers them and maps the model's calls back). Plain data: no MCP SDK here, so a brain process
 * never loads it.
 */
import { createHash } from 'node:crypto';

/** One MCP tool as a brain offers it to the model. */
export interface McpToolDefinition {
  /** The name the model calls it by (`mcp__<server>__<tool>`, see mcpModelToolName). */
  name: string;
  /** The server's name in the agent's `mcp_servers`. */
  mcp_server_name: string;
  /** The tool's own name on its server (what `agent.mcp_tool_use.name` carries). */
  tool_name: string;
  description: string;
  input_schema: { type: 'object'; [k: string]: unknown };
}

const MAX_NAME = 128;
const safe = (s: string) => s.replace(/[^a-zA-Z0-9_-]/g, '_');

/**
 * The model-facing name of a server's tool. The Messages API allows `[a-zA-Z0-9_-]{1,128}`, and
 * names must not clash with the built-in tools: `mcp__server__tool` (the convention of Claude's
 * MCP clients), other characters as `_`, and a long one cut with a hash of the whole so two long
 * names stay apart. Deterministic: the transcript rebuilds it from the event's two names.
 */
export function mcpModelToolName(server: string, tool: string): string {
  const name = `mcp__${safe(server)}__${safe(tool)}`;
  if (name.length <= MAX_NAME && name === `mcp__${server}__${tool}`) return name;
  const hash = createHash('sha256').update(`${server}\u0000${tool}`).digest('hex').slice(0, 8);
  return `${name.slice(0, MAX_NAME - 9)}_${hash}`;
}
