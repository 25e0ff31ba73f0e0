import type { LoggedEvent } from '../session/types';
import type { McpToolDefinition } from '../mcp/names';
import type { BrainEventInput } from './brain-event-schema';
import type { BuiltRequest } from './context';
import type { FinishedBlock, ModelFailure, ModelUsage } from './model';
import type { evaluateCall } from './permissions';
import { resultEventFor } from './tool-result-event';

// The events the harness appends, built from what it has in hand (a finished block, a call to
// answer, a request to close). Pure: the harness decides when; this file only says what.

/** Usage of a request that produced nothing (interrupted, abandoned, failed). */
export const ZERO_USAGE: ModelUsage = { input_tokens: 0, output_tokens: 0, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 };

/** An `agent.tool_result` answering `call` with one text. */
export function toolResult(call: LoggedEvent, text: string, isError: boolean, details?: Record<string, unknown>): BrainEventInput {
  return resultEventFor(call, { content: text, isError, details });
}

/**
 * The `span.model_request_start` of a built request. Elision is oldest first and for good (while
 * the request's start holds), so "every tool result up to a position" says which were elided in
 * a constant space (a list would grow the log by the session's length per step); what lies before
 * a dropped start is not sent at all.
 */
export function requestStart(id: string, built: BuiltRequest): BrainEventInput {
  return {
    type: 'span.model_request_start',
    id,
    context_seq: built.contextSeq,
    ...(built.elidedSeqs.length ? { elided_count: built.elidedSeqs.length, elided_through: built.elidedSeqs.at(-1)! } : {}),
    ...(built.droppedThrough !== undefined ? { dropped_through: built.droppedThrough } : {}),
  };
}

/** The `span.model_request_end` closing the request `startId`. */
export function requestEnd(
  startId: string,
  isError: boolean,
  usage: ModelUsage,
  error?: { type?: ModelFailure['errorType']; message: string; status?: number },
  stopReason?: string,
): BrainEventInput {
  return {
    type: 'span.model_request_end',
    model_request_start_id: startId,
    is_error: isError,
    model_usage: usage,
    ...(stopReason ? { stop_reason: stopReason } : {}),
    ...(error ? { error } : {}),
  };
}

/** The event a finished block becomes (`id`: the one its live text already named). */
export function blockToEvent(
  block: FinishedBlock,
  customNames: Set<string>,
  id: string | undefined,
  mcp: ReadonlyMap<string, McpToolDefinition>,
  evaluate: (name: string, mcpTool?: McpToolDefinition) => ReturnType<typeof evaluateCall>,
): BrainEventInput | undefined {
  const named = id ? { id } : {};
  switch (block.type) {
    case 'text':
      return block.text ? { type: 'agent.message', ...named, content: [{ type: 'text', text: block.text }] } : undefined;
    case 'thinking':
      return { type: 'agent.thinking', ...named, thinking: block.thinking, signature: block.signature };
    case 'redacted_thinking':
      return { type: 'agent.thinking', ...named, redacted: true };
    case 'tool_use': {
      const call = { name: block.name, input: block.input, model_tool_use_id: block.id };
      const tool = mcp.get(block.name);
      if (tool) return { type: 'agent.mcp_tool_use', ...call, name: tool.tool_name, mcp_server_name: tool.mcp_server_name, ...evaluate(block.name, tool) };
      return customNames.has(block.name) ? { type: 'agent.custom_tool_use', ...call } : { type: 'agent.tool_use', ...call, ...evaluate(block.name) };
    }
  }
}
