import type { ToolDefinition } from '../hands/tools/definitions';
import type { LoggedEvent } from '../session/types';

/** A content block of a Messages API request (the subset the brain produces). */
export type Block = { type: string; cache_control?: { type: 'ephemeral' }; [k: string]: unknown };
export interface Message {
  role: 'user' | 'assistant';
  content: Block[];
}
/** A tool in a request: its definition, perhaps with a prompt-cache breakpoint. */
export type RequestTool = ToolDefinition & { cache_control?: { type: 'ephemeral' } };

/** What the request is built for. */
export interface ContextOptions {
  model: string;
  system: string | null;
  tools: readonly ToolDefinition[];
  maxTokens: number;
  /** The model's context window in tokens; older tool results are elided to fit it. */
  contextWindowTokens: number;
}

/** A Messages API request built from the log, and what was left out of it. */
export interface BuiltRequest {
  params: {
    model: string;
    max_tokens: number;
    system?: Block[];
    tools?: RequestTool[];
    messages: Message[];
  };
  /** The last log position the request includes. */
  contextSeq: number;
  /** Positions of tool results whose content was elided from this request (never from the log). */
  elidedSeqs: number[];
  estimatedTokens: number;
}

const CHARS_PER_TOKEN = 4;
const estimate = (v: unknown) => Math.ceil(JSON.stringify(v).length / CHARS_PER_TOKEN);

function textBlocks(content: unknown): Block[] {
  if (!Array.isArray(content)) return [];
  return content.filter((b): b is Block => typeof b === 'object' && b !== null && (b as Block).type !== 'redacted').map((b) => ({ ...b }));
}

/** One event's contribution to the transcript, or nothing. */
function toBlock(e: LoggedEvent): { role: 'user' | 'assistant'; blocks: Block[]; seq: number } | undefined {
  switch (e.type) {
    case 'user.message':
      return { role: 'user', blocks: textBlocks(e.content), seq: e.seq };
    case 'system.message':
      return {
        role: 'user',
        blocks: textBlocks(e.content).map((b) => ({ type: 'text', text: `<system-message>\n${String(b.text ?? '')}\n</system-message>` })),
        seq: e.seq,
      };
    case 'agent.message':
      return { role: 'assistant', blocks: textBlocks(e.content), seq: e.seq };
    case 'agent.thinking':
      // Thinking is replayed only with its signature (the API rejects unsigned thinking).
      return typeof e.thinking === 'string' && typeof e.signature === 'string' && e.signature
        ? { role: 'assistant', blocks: [{ type: 'thinking', thinking: e.thinking, signature: e.signature }], seq: e.seq }
        : undefined;
    case 'agent.tool_use':
    case 'agent.custom_tool_use':
      return { role: 'assistant', blocks: [{ type: 'tool_use', id: e.id, name: e.name, input: e.input ?? {} }], seq: e.seq };
    case 'agent.tool_result':
    case 'user.tool_result':
    case 'user.custom_tool_result': {
      const id = e.type === 'user.custom_tool_result' ? e.custom_tool_use_id : e.tool_use_id;
      const content = textBlocks(e.content);
      return {
        role: 'user',
        blocks: [{ type: 'tool_result', tool_use_id: id, content: content.length ? content : [{ type: 'text', text: '(no output)' }], is_error: e.is_error === true, _seq: e.seq }],
        seq: e.seq,
      };
    }
    default:
      return undefined;
  }
}

/**
 * Builds the model request for a session from its log. Pure: the same events and options give
 * the same request. Consecutive events of one role form one message; tool results lead their
 * user message; prompt-cache breakpoints sit on the tools, the system prompt and the ends of
 * the last two user turns, so each request extends the cached prefix of the one before. When
 * the transcript outgrows the window, the oldest tool results are elided in the request (with a
 * note saying how to read them again), never in the log.
 */
export function buildRequest(events: readonly LoggedEvent[], opts: ContextOptions): BuiltRequest {
  const messages: Message[] = [];
  let contextSeq = 0;
  for (const e of events) {
    contextSeq = e.seq;
    const part = toBlock(e);
    if (!part || part.blocks.length === 0) continue;
    const last = messages[messages.length - 1];
    if (last && last.role === part.role) last.content.push(...part.blocks);
    else messages.push({ role: part.role, content: [...part.blocks] });
  }
  for (const m of messages) {
    if (m.role === 'user') {
      // Tool results must come first in a user message (a message typed mid-tool lands after).
      m.content.sort((a, b) => Number(b.type === 'tool_result') - Number(a.type === 'tool_result'));
    }
  }
  // The request must start with the user; a trailing assistant message is a prefill the model
  // continues (after a cut stream), which may not end in white space or in thinking.
  while (messages[0]?.role === 'assistant') messages.shift();
  const tail = messages[messages.length - 1];
  if (tail?.role === 'assistant') {
    while (tail.content.length && tail.content[tail.content.length - 1]!.type === 'thinking') tail.content.pop();
    const lastBlock = tail.content[tail.content.length - 1];
    if (lastBlock?.type === 'text') lastBlock.text = String(lastBlock.text).trimEnd();
    if (tail.content.length === 0 || (lastBlock?.type === 'text' && lastBlock.text === '')) messages.pop();
  }

  const system: Block[] | undefined = opts.system ? [{ type: 'text', text: opts.system }] : undefined;
  const tools: RequestTool[] = opts.tools.map((t) => ({ ...t }));
  const elidedSeqs = elideToFit(messages, system, tools, opts);

  // Cache breakpoints (at most 4): tools, system, and the last two user turns.
  if (tools.length) tools[tools.length - 1]!.cache_control = { type: 'ephemeral' };
  if (system) system[system.length - 1]!.cache_control = { type: 'ephemeral' };
  const userTurns = messages.filter((m) => m.role === 'user').slice(-2);
  for (const m of userTurns) {
    const b = m.content[m.content.length - 1];
    if (b) b.cache_control = { type: 'ephemeral' };
  }
  for (const m of messages) for (const b of m.content) delete b._seq;

  const params: BuiltRequest['params'] = { model: opts.model, max_tokens: opts.maxTokens, messages };
  if (system) params.system = system;
  if (tools.length) params.tools = tools;
  return { params, contextSeq, elidedSeqs, estimatedTokens: estimate(params) };
}

function elideToFit(messages: Message[], system: Block[] | undefined, tools: RequestTool[], opts: ContextOptions): number[] {
  const budget = opts.contextWindowTokens - opts.maxTokens;
  let total = estimate(messages) + estimate(system ?? []) + estimate(tools);
  if (total <= budget) return [];
  const elided: number[] = [];
  // Oldest first; the newest turn stays whole so the model sees what it just did.
  const candidates = messages.slice(0, -1).flatMap((m) => m.content.filter((b) => b.type === 'tool_result'));
  for (const b of candidates) {
    if (total <= budget) break;
    const before = estimate(b.content);
    const seq = b._seq as number;
    const chars = JSON.stringify(b.content).length;
    b.content = [
      {
        type: 'text',
        text: `[elided from this request to fit the context window: ${chars} characters. Read it again with read_session_events {"from": ${seq}, "to": ${seq}}]`,
      },
    ];
    total -= before - estimate(b.content);
    elided.push(seq);
  }
  return elided;
}
