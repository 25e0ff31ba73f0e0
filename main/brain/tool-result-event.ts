import type { ToolOutcome } from '../hands/types';
import type { BrainEventInput } from './brain-event-schema';

/** The idempotency key of a tool call's result: whoever records it first (host or brain) wins. */
export const resultKey = (toolUseId: string) => `res:${toolUseId}`;

/** The `agent.tool_result` event of a tool call's outcome. */
export function toolResultEvent(toolUseId: string, outcome: ToolOutcome): Extract<BrainEventInput, { type: 'agent.tool_result' }> {
  const content: Extract<BrainEventInput, { type: 'agent.tool_result' }>['content'] = [{ type: 'text', text: outcome.content || '(no output)' }];
  for (const img of outcome.images ?? []) content.push({ type: 'image', source: { type: 'base64', media_type: img.media_type, data: img.data } });
  return { type: 'agent.tool_result', tool_use_id: toolUseId, content, is_error: outcome.isError, ...(outcome.details ? { details: outcome.details } : {}) };
}
