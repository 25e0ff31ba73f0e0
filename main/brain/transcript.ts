import type { LoggedEvent } from '../session/types';
import { mcpModelToolName } from '../mcp/names';
import { serverBlockOf } from './server-tools';

/** A content block of a Messages API request (the subset the brain produces). */
export type Block = { type: string; cache_control?: { type: 'ephemeral' }; [k: string]: unknown };
export interface Message {
  role: 'user' | 'assistant';
  content: Block[];
}

/** One event's contribution to the transcript. */
export interface TranscriptPart {
  role: 'user' | 'assistant';
  blocks: Block[];
}

export const CACHE_MARK = { type: 'ephemeral' } as const;
export const CHARS_PER_TOKEN = 4;

/** The request-size estimate used throughout: JSON characters / 4, rounded up. */
export const estimateTokens = (v: unknown) => Math.ceil(JSON.stringify(v).length / CHARS_PER_TOKEN);
export const tokensOfChars = (chars: number) => Math.ceil(chars / CHARS_PER_TOKEN);

function textBlocks(content: unknown): Block[] {
  if (!Array.isArray(content)) return [];
  return content.filter((b): b is Block => typeof b === 'object' && b !== null && (b as Block).type !== 'redacted').map((b) => ({ ...b }));
}

/** One event's contribution to the transcript (fresh objects), or nothing. */
export function partOf(e: LoggedEvent): TranscriptPart | undefined {
  switch (e.type) {
    case 'user.message':
      return { role: 'user', blocks: textBlocks(e.content) };
    case 'system.message':
      return {
        role: 'user',
        blocks: textBlocks(e.content).map((b) => ({ type: 'text', text: `<system-message>\n${String(b.text ?? '')}\n</system-message>` })),
      };
    case 'agent.message':
      return { role: 'assistant', blocks: textBlocks(e.content) };
    case 'agent.thinking':
      // Thinking is replayed only with its signature (the API rejects unsigned thinking).
      return typeof e.thinking === 'string' && typeof e.signature === 'string' && e.signature
        ? { role: 'assistant', blocks: [{ type: 'thinking', thinking: e.thinking, signature: e.signature }] }
        : undefined;
    case 'agent.tool_use':
      if (e.server_block) return { role: 'assistant', blocks: [serverBlockOf(e)] };
    // falls through
    case 'agent.custom_tool_use':
      return { role: 'assistant', blocks: [{ type: 'tool_use', id: e.id, name: e.name, input: e.input ?? {} }] };
    case 'agent.mcp_tool_use':
      return { role: 'assistant', blocks: [{ type: 'tool_use', id: e.id, name: mcpModelToolName(String(e.mcp_server_name), String(e.name)), input: e.input ?? {} }] };
    case 'agent.tool_result':
    case 'agent.mcp_tool_result':
    case 'user.tool_result':
    case 'user.custom_tool_result': {
      // A server tool's result stays in the assistant's message, as the model sent it.
      if (e.server_block) return { role: 'assistant', blocks: [serverBlockOf(e)] };
      const id = e.type === 'user.custom_tool_result' ? e.custom_tool_use_id : e.type === 'agent.mcp_tool_result' ? e.mcp_tool_use_id : e.tool_use_id;
      const content = textBlocks(e.content);
      return {
        role: 'user',
        blocks: [{ type: 'tool_result', tool_use_id: id, content: content.length ? content : [{ type: 'text', text: '(no output)' }], is_error: e.is_error === true }],
      };
    }
    default:
      return undefined;
  }
}

/**
 * A trailing assistant message is a prefill the model continues (after a cut stream). It may not
 * end in white space or in thinking: trailing thinking and blank text blocks go, the last text
 * loses its trailing white space. Returns the blocks to send (fresh array; a trimmed text block
 * is a copy), empty when nothing is left to continue.
 */
export function trimPrefill(content: readonly Block[]): Block[] {
  const out = [...content];
  for (;;) {
    const b = out[out.length - 1];
    if (b && (b.type === 'thinking' || (b.type === 'text' && String(b.text).trimEnd() === ''))) out.pop();
    else break;
  }
  const last = out[out.length - 1];
  if (last?.type === 'text') out[out.length - 1] = { ...last, text: String(last.text).trimEnd() };
  return out;
}

/**
 * The content a tool result is given when it is elided from a request (never in the log), from
 * the JSON length of the content it replaces.
 */
export function elisionNote(originalChars: number, seq: number): Block[] {
  return [
    {
      type: 'text',
      text: `[elided from this request to fit the context window: ${originalChars} characters. Read it again with read_session_events {"from": ${seq}, "to": ${seq}}]`,
    },
  ];
}

/** Tokens an elision saves: the result's content (by its JSON length) against its note. */
export function elisionSaving(originalChars: number, note: Block[]): number {
  return tokensOfChars(originalChars) - estimateTokens(note);
}
