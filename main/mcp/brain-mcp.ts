import type { ToolOutcome } from '../hands/types';
import type { McpToolDefinition } from './names';

/** What the brain supervisor needs of the host's MCP client (McpSessions). */
export interface BrainMcp {
  /** The session's enabled MCP tools (connecting to its servers the first time). */
  tools(sessionId: string): Promise<McpToolDefinition[]>;
  /** Runs one call; a failure is the call's error outcome. */
  call(sessionId: string, server: string, tool: string, input: Record<string, unknown>, signal: AbortSignal): Promise<ToolOutcome>;
  /** The session's brain is gone: close its connections. */
  closeSession(sessionId: string): Promise<void>;
}
