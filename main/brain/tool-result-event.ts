import type { ToolOutcome } from '../hands/types';
import type { LoggedEvent } from '../session/types';
import type { BrainEventInput } from './brain-event-schema';

/** The idempotency key of a tool call's result: whoever records it first (host or brain) wins. */
export const resultKey = (toolUseId: string) => `res:${toolUseId}`;

type ResultContent = Extract<BrainEventInput, { type: 'agent.tool_result' }>['content'];

function contentOf(outcome: ToolOutcome): ResultContent {
  const content: ResultContent = [{ type: 'text', text: outcome.content || '(no output)' }];
  for (const img of outcome.images ?? []) content.push({ type: 'image', source: { type: 'base64', media_type: img.media_type, data: img.data } });
  return content;
}

/** The `agent.tool_result` event of a tool call's outcome. */
export function toolResultEvent(toolUseId: string, outcome: ToolOutcome): Extract<BrainEventInput, { type: 'agent.tool_result' }> {
  return { type: 'agent.tool_result', tool_use_id: toolUseId, content: contentOf(outcome), is_error: outcome.isError, ...(outcome.details ? { details: outcome.details } : {}) };
}

/** The `agent.mcp_tool_result` event of an MCP call's outcome (the API's shape, plus Corral's details). */
export function mcpToolResultEvent(toolUseId: string, outcome: ToolOutcome): Extract<BrainEventInput, { type: 'agent.mcp_tool_result' }> {
  return { type: 'agent.mcp_tool_result', mcp_tool_use_id: toolUseId, content: contentOf(outcome), is_error: outcome.isError, ...(outcome.details ? { details: outcome.details } : {}) };
}

/** The result event answering a call event of either kind (`agent.tool_use` or `agent.mcp_tool_use`). */
export function resultEventFor(call: Pick<LoggedEvent, 'id' | 'type'>, outcome: ToolOutcome): BrainEventInput {
  return call.type === 'agent.mcp_tool_use' ? mcpToolResultEvent(call.id, outcome) : toolResultEvent(call.id, outcome);
}
