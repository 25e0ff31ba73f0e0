import type { ToolDefinition } from '../hands/tools/definitions';
import type { LoggedEvent } from '../session/types';
import type { FinishedBlock } from './model';
import type { Block } from './transcript';

/**
 * The model's server tools: `web_search` and `web_fetch` of the agent toolset are run by the
 * model provider, not by a hand. The request names them in the Messages API's own shapes; the
 * reply carries a `server_tool_use` block and its `web_search_tool_result` /
 * `web_fetch_tool_result` in the same assistant message, and both must go back in the next
 * request exactly as they came.
 *
 * In the log they are the Managed Agents event types a client already knows: `agent.tool_use`
 * (name `web_search`) and `agent.tool_result` (a readable summary as `content`). Each also
 * carries Corral's `server_block`, the block as the model sent it, which is what the transcript
 * replays; it also tells every reader that nothing is to be run or answered for the call.
 */

/** The Messages API's tool definitions (versions as typed in the SDK's Messages `ToolUnion`). */
export const SERVER_TOOL_DEFINITIONS: Readonly<Record<string, Readonly<Record<string, unknown>>>> = {
  web_search: { type: 'web_search_20250305', name: 'web_search' },
  web_fetch: { type: 'web_fetch_20250910', name: 'web_fetch' },
};
export const SERVER_TOOL_NAMES = Object.keys(SERVER_TOOL_DEFINITIONS);

const RESULT_TYPES = new Set(['web_search_tool_result', 'web_fetch_tool_result']);

/** Whether a finished reply block is a server tool's result (as the stream delivered it). */
export function isServerResultType(type: unknown): boolean {
  return typeof type === 'string' && RESULT_TYPES.has(type);
}

/** Whether an event is a server tool's call or result (nothing to run, nothing to answer). */
export function isServerToolEvent(e: { type: string; server_block?: unknown }): boolean {
  return (e.type === 'agent.tool_use' || e.type === 'agent.tool_result') && typeof e.server_block === 'object' && e.server_block !== null;
}

/** The `agent.tool_use` a `server_tool_use` block becomes. */
export function serverUseEvent(block: Record<string, unknown>): { type: 'agent.tool_use'; name: string; input: Record<string, unknown>; model_tool_use_id: string; server_block: Record<string, unknown> } {
  return {
    type: 'agent.tool_use',
    name: String(block.name),
    input: (block.input ?? {}) as Record<string, unknown>,
    model_tool_use_id: String(block.id),
    server_block: block,
  };
}

/** What a server tool's result is logged as. */
export interface ServerResultInput {
  type: 'agent.tool_result';
  tool_use_id: string;
  content: { type: 'text'; text: string }[];
  is_error: boolean;
  server_block: Record<string, unknown>;
}

/**
 * The `agent.tool_result` a result block becomes, answering the logged call it names (by the
 * model's id), or undefined when no such call was logged in this reply.
 */
export function serverResultEvent(
  block: Record<string, unknown>,
  calls: readonly LoggedEvent[],
): ServerResultInput | undefined {
  const use = calls.find((e) => e.type === 'agent.tool_use' && e.model_tool_use_id === block.tool_use_id && e.server_block);
  if (!use) return undefined;
  const { text, isError } = summarise(block);
  return { type: 'agent.tool_result', tool_use_id: use.id, content: [{ type: 'text', text }], is_error: isError, server_block: block };
}

/**
 * The result logged for a server call whose own result never came (the stream was cut): an
 * error in the API's shape, so the next request still pairs every call with a result.
 */
export function cutServerResult(use: LoggedEvent): ServerResultInput {
  const search = use.name === 'web_search';
  const block = {
    type: search ? 'web_search_tool_result' : 'web_fetch_tool_result',
    tool_use_id: String(use.model_tool_use_id),
    content: { type: search ? 'web_search_tool_result_error' : 'web_fetch_tool_result_error', error_code: 'unavailable' },
  };
  return { type: 'agent.tool_result', tool_use_id: use.id, content: [{ type: 'text', text: 'Not completed: the model response was cut off before the result arrived.' }], is_error: true, server_block: block };
}

/** The block a server tool event puts in the transcript: a copy of what the model sent. */
export function serverBlockOf(e: LoggedEvent): Block {
  return structuredClone(e.server_block) as Block;
}

/** A short readable form of a result for the log's `content` (the window and API clients). */
function summarise(block: Record<string, unknown>): { text: string; isError: boolean } {
  const content = block.content as unknown;
  if (content && typeof content === 'object' && !Array.isArray(content)) {
    const c = content as Record<string, unknown>;
    if (typeof c.error_code === 'string') return { text: `${String(block.type)}: error ${c.error_code}`, isError: true };
    if (c.type === 'web_fetch_result') {
      const doc = c.content as { title?: unknown; source?: { data?: unknown } } | undefined;
      const data = typeof doc?.source?.data === 'string' ? doc.source.data : '';
      const title = typeof doc?.title === 'string' ? `${doc.title}\n` : '';
      return { text: `Fetched ${String(c.url)}\n${title}${data.slice(0, 2000)}${data.length > 2000 ? '…' : ''}`, isError: false };
    }
  }
  if (Array.isArray(content)) {
    const lines = content.map((r: Record<string, unknown>) => `- ${String(r.title ?? '')} ${String(r.url ?? '')}`.trimEnd());
    return { text: lines.length ? `Search results:\n${lines.join('\n')}` : 'No search results.', isError: false };
  }
  return { text: `${String(block.type)}`, isError: false };
}

/** The request's definitions of the server tools the agent enables (typed loosely: they have no input_schema). */
export function serverToolDefinitions(names: readonly string[]): ToolDefinition[] {
  return names.filter((n) => SERVER_TOOL_DEFINITIONS[n]).map((n) => ({ ...SERVER_TOOL_DEFINITIONS[n] }) as unknown as ToolDefinition);
}

/** The event a finished server block becomes (undefined for any other block, or a result for no logged call). */
export function serverBlockEvent(block: FinishedBlock, logged: readonly LoggedEvent[]): ReturnType<typeof serverUseEvent> | ServerResultInput | undefined {
  if (block.type === 'server_tool_use') return serverUseEvent(block.block);
  if (block.type === 'server_tool_result') return serverResultEvent(block.block, logged);
  return undefined;
}

/**
 * The calls of a reply that was cut short that still need an answer: the hands' and MCP calls
 * (the caller answers them as not run), and server calls whose result never came, each with
 * the error result to log for it.
 */
export function callsCutShort(logged: readonly LoggedEvent[]): { use: LoggedEvent; serverResult?: ServerResultInput }[] {
  const out: { use: LoggedEvent; serverResult?: ServerResultInput }[] = [];
  for (const use of logged) {
    if (use.type !== 'agent.tool_use' && use.type !== 'agent.mcp_tool_use') continue;
    if (!use.server_block) out.push({ use });
    else if (!logged.some((e) => e.type === 'agent.tool_result' && e.tool_use_id === use.id)) out.push({ use, serverResult: cutServerResult(use) });
  }
  return out;
}
