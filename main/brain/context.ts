import type { ToolDefinition } from '../hands/tools/definitions';
import type { LoggedEvent } from '../session/types';
import { charsToDrop, dropNote } from './context-drop';
import { CACHE_MARK, elisionNote, elisionSaving, estimateTokens, partOf, trimPrefill, type Block, type Message } from './transcript';

export type { Block, Message } from './transcript';

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
  /** The agent's model settings as Messages API parameters (`output_config.effort`, `speed`, `inference_geo`). */
  modelOptions?: ModelOptions;
}

/** Messages API parameters an agent's model config sets (see agent-config.ts). */
export interface ModelOptions {
  output_config?: { effort: string };
  speed?: string;
  inference_geo?: string;
}

/** A Messages API request built from the log, and what was left out of it. */
export interface BuiltRequest {
  params: {
    model: string;
    max_tokens: number;
    system?: Block[];
    tools?: RequestTool[];
    messages: Message[];
  } & ModelOptions;
  /** The last log position the request includes. */
  contextSeq: number;
  /** Positions of tool results whose content was elided from this request (never from the log). */
  elidedSeqs: number[];
  /** Set when the oldest turns were dropped to fit the window (context-drop.ts): the last event left out. */
  droppedThrough?: number;
  /** Size of the request in tokens, estimated (characters / 4 of messages, system and tools, after elision). */
  estimatedTokens: number;
}

/**
 * Builds the model request for a session from its log. Pure: the same events and options give
 * the same request (the reference the incremental ContextBuilder is tested against). Consecutive
 * events of one role form one message; tool results lead their user message; prompt-cache
 * breakpoints sit on the tools, the system prompt and the ends of the last two user turns, so
 * each request extends the cached prefix of the one before. When the transcript outgrows the
 * window, the oldest tool results are elided in the request (with a note saying how to read them
 * again), never in the log.
 */
export function buildRequest(events: readonly LoggedEvent[], opts: ContextOptions): BuiltRequest {
  const messages: Message[] = [];
  const seqOf = new Map<Block, number>();
  const firstSeqOf = new Map<Message, number>();
  let contextSeq = 0;
  for (const e of events) {
    contextSeq = e.seq;
    const part = partOf(e);
    if (!part || part.blocks.length === 0) continue;
    for (const b of part.blocks) if (b.type === 'tool_result') seqOf.set(b, e.seq);
    const last = messages[messages.length - 1];
    if (last && last.role === part.role) last.content.push(...part.blocks);
    else {
      messages.push({ role: part.role, content: [...part.blocks] });
      firstSeqOf.set(messages[messages.length - 1]!, e.seq);
    }
  }
  for (const m of messages) {
    if (m.role === 'user') {
      // Tool results must come first in a user message (a message typed mid-tool lands after).
      m.content.sort((a, b) => Number(b.type === 'tool_result') - Number(a.type === 'tool_result'));
    }
  }
  // The request must start with the user; a trailing assistant message is a prefill.
  while (messages[0]?.role === 'assistant') messages.shift();
  const tail = messages[messages.length - 1];
  if (tail?.role === 'assistant') {
    tail.content = trimPrefill(tail.content);
    if (tail.content.length === 0) messages.pop();
  }

  const system: Block[] | undefined = opts.system ? [{ type: 'text', text: opts.system }] : undefined;
  const tools: RequestTool[] = opts.tools.map((t) => ({ ...t }));
  const cut = cutFor(messages, seqOf, estimateTokens(system ?? []) + estimateTokens(tools), budgetOf(opts));
  let droppedThrough: number | undefined;
  if (cut > 0) {
    droppedThrough = firstSeqOf.get(messages[cut]!)! - 1;
    messages.splice(0, cut, dropNote(droppedThrough, firstSeqOf.get(messages[0]!)!));
  }
  const { elided, total } = elideToFit(messages, seqOf, system, tools, opts);

  // Cache breakpoints (at most 4): tools, system, and the last two user turns.
  if (tools.length) tools[tools.length - 1]!.cache_control = CACHE_MARK;
  if (system) system[system.length - 1]!.cache_control = CACHE_MARK;
  const userTurns = messages.filter((m) => m.role === 'user').slice(-2);
  for (const m of userTurns) {
    const b = m.content[m.content.length - 1];
    if (b) b.cache_control = CACHE_MARK;
  }

  const params: BuiltRequest['params'] = { model: opts.model, max_tokens: opts.maxTokens, ...opts.modelOptions, messages };
  if (system) params.system = system;
  if (tools.length) params.tools = tools;
  const built: BuiltRequest = { params, contextSeq, elidedSeqs: elided, estimatedTokens: total };
  if (droppedThrough !== undefined) built.droppedThrough = droppedThrough;
  return built;
}

/**
 * Where the request starts when the oldest messages are dropped (context-drop.ts): the first
 * assistant message once enough is dropped (its tool calls' results follow it), else the last
 * one; 0 when nothing is dropped. Sizes count every tool result but the newest message's as elided.
 */
function cutFor(messages: readonly Message[], seqOf: Map<Block, number>, fixedTokens: number, budget: number): number {
  const last = messages.length - 1;
  const sizes = messages.slice(0, Math.max(0, last)).map((m) => {
    const content = m.content.map((b) => (b.type === 'tool_result' ? { ...b, content: elisionNote(JSON.stringify(b.content).length, seqOf.get(b)!) } : b));
    return JSON.stringify({ ...m, content }).length + 1;
  });
  const need = charsToDrop(sizes.reduce((a, b) => a + b, 0), fixedTokens, budget);
  if (need === 0) return 0;
  let dropped = 0;
  for (let k = 1; k <= last; k++) {
    dropped += sizes[k - 1]!;
    if (dropped >= need && messages[k]!.role === 'assistant') return k;
  }
  for (let k = last; k >= 1; k--) if (messages[k]!.role === 'assistant') return k;
  return 0;
}

/** Token budget of the transcript: the window less the reply. */
export const budgetOf = (opts: ContextOptions) => opts.contextWindowTokens - opts.maxTokens;

function elideToFit(
  messages: Message[],
  seqOf: Map<Block, number>,
  system: Block[] | undefined,
  tools: RequestTool[],
  opts: ContextOptions,
): { elided: number[]; total: number } {
  const budget = budgetOf(opts);
  let total = estimateTokens(messages) + estimateTokens(system ?? []) + estimateTokens(tools);
  const elided: number[] = [];
  if (total <= budget) return { elided, total };
  // Oldest first; the newest turn stays whole so the model sees what it just did.
  const candidates = messages.slice(0, -1).flatMap((m) => m.content.filter((b) => b.type === 'tool_result'));
  for (const b of candidates) {
    if (total <= budget) break;
    const seq = seqOf.get(b)!;
    const chars = JSON.stringify(b.content).length;
    const note = elisionNote(chars, seq);
    total -= elisionSaving(chars, note);
    b.content = note;
    elided.push(seq);
  }
  return { elided, total };
}
