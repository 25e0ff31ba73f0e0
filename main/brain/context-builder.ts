import type { LoggedEvent } from '../session/types';
import { budgetOf, type BuiltRequest, type ContextOptions, type RequestTool } from './context';
import { CACHE_MARK, elisionNote, elisionSaving, estimateTokens, partOf, tokensOfChars, trimPrefill, type Block, type Message } from './transcript';

/** JSON length of a message with no blocks, by role. */
const EMPTY_MESSAGE_CHARS = {
  user: JSON.stringify({ role: 'user', content: [] }).length,
  assistant: JSON.stringify({ role: 'assistant', content: [] }).length,
};

interface MessageMeta {
  /** JSON length of the message with every block as first folded (before any elision). */
  chars: number;
  /** Tool results lead a user message: how many there are at its head. */
  results: number;
}

interface Candidate {
  block: Block;
  seq: number;
  /** JSON length of its content as folded (the elision note and saving need it). */
  contentChars: number;
  /** Index of the message that holds it. */
  message: number;
}

/**
 * The model request of a session, kept up to date event by event: a brain folds each event it
 * learns of into the transcript once, and building the next request costs the newest turns, not
 * the length of the log. For the same events and options it gives what `buildRequest` (the pure
 * reference) gives. It keeps a running size estimate; when the window is full it elides the
 * oldest tool results (in its transcript, never in the log) and never brings one back, so the
 * prefix the model has cached stays the same from one request to the next. (If the options shrink
 * the request later — a larger window, fewer tools — what was elided stays elided, where the pure
 * reference would bring it back.)
 *
 * A built request shares objects with the transcript: send or copy it before folding more.
 */
export class ContextBuilder {
  private readonly messages: Message[] = [];
  private readonly meta: MessageMeta[] = [];
  /** Index of the first user message: the request starts there (-1: none yet). */
  private firstUser = -1;
  /** Sum of `meta.chars` from `firstUser` on. */
  private charsFromFirstUser = 0;
  private contextSeq = 0;
  /** Tool results in log order: the elision order. */
  private readonly candidates: Candidate[] = [];
  private nextCandidate = 0;
  private readonly elided: number[] = [];
  private savedTokens = 0;
  private tools?: { from: readonly ContextOptions['tools'][number][]; request: RequestTool[]; tokens: number };
  private system?: { from: string | null; request: Block[] | undefined; tokens: number };

  /** The last log position folded in. */
  get lastSeq(): number {
    return this.contextSeq;
  }

  /** Takes the next event of the log (in order). */
  fold(e: LoggedEvent): void {
    this.contextSeq = e.seq;
    const part = partOf(e);
    if (!part || part.blocks.length === 0) return;
    let index = this.messages.length - 1;
    if (index < 0 || this.messages[index]!.role !== part.role) {
      this.messages.push({ role: part.role, content: [] });
      this.meta.push({ chars: EMPTY_MESSAGE_CHARS[part.role], results: 0 });
      index += 1;
      if (this.firstUser < 0 && part.role === 'user') this.firstUser = index;
      if (this.firstUser >= 0) this.charsFromFirstUser += EMPTY_MESSAGE_CHARS[part.role];
    }
    const message = this.messages[index]!;
    const meta = this.meta[index]!;
    for (const block of part.blocks) {
      const result = block.type === 'tool_result';
      // A result's content is measured once, on its own: its elision needs that length too.
      const contentChars = result ? JSON.stringify(block.content).length : 0;
      const blockChars = result ? JSON.stringify({ ...block, content: 0 }).length - 1 + contentChars : JSON.stringify(block).length;
      const chars = blockChars + (message.content.length > 0 ? 1 : 0);
      meta.chars += chars;
      if (this.firstUser >= 0) this.charsFromFirstUser += chars;
      if (result) {
        // Tool results lead their user message, in log order (a message typed mid-tool lands after).
        message.content.splice(meta.results, 0, block);
        meta.results += 1;
        this.candidates.push({ block, seq: e.seq, contentChars, message: index });
      } else {
        message.content.push(block);
      }
    }
  }

  /** The request for everything folded so far. */
  build(opts: ContextOptions): BuiltRequest {
    const messages = this.firstUser < 0 ? [] : this.messages.slice(this.firstUser);
    let chars = this.charsFromFirstUser;
    let last = this.messages.length - 1;
    const tail = messages[messages.length - 1];
    if (tail?.role === 'assistant') {
      const content = trimPrefill(tail.content);
      if (content.length === 0) {
        messages.pop();
        chars -= this.meta[last]!.chars;
        last -= 1;
      } else {
        const trimmed: Message = { role: 'assistant', content };
        chars += JSON.stringify(trimmed).length - this.meta[last]!.chars;
        messages[messages.length - 1] = trimmed;
      }
    }
    const messageChars = messages.length === 0 ? 2 : 2 + chars + messages.length - 1;
    const tools = this.toolsFor(opts.tools);
    const system = this.systemFor(opts.system);

    // Oldest tool results first, never one from the newest message; elided once, for good.
    const budget = budgetOf(opts);
    let total = tokensOfChars(messageChars) + system.tokens + tools.tokens - this.savedTokens;
    while (total > budget && this.nextCandidate < this.candidates.length && this.candidates[this.nextCandidate]!.message < last) {
      const { block, seq, contentChars } = this.candidates[this.nextCandidate++]!;
      const note = elisionNote(contentChars, seq);
      const saving = elisionSaving(contentChars, note);
      block.content = note;
      this.savedTokens += saving;
      total -= saving;
      this.elided.push(seq);
    }

    // Cache breakpoints on the last two user turns (copies: the transcript keeps no marks).
    for (let i = messages.length - 1, marked = 0; i >= 0 && marked < 2; i--) {
      const m = messages[i]!;
      if (m.role !== 'user' || m.content.length === 0) continue;
      const content = [...m.content];
      content[content.length - 1] = { ...content[content.length - 1]!, cache_control: CACHE_MARK };
      messages[i] = { role: 'user', content };
      marked += 1;
    }

    const params: BuiltRequest['params'] = { model: opts.model, max_tokens: opts.maxTokens, ...opts.modelOptions, messages };
    if (system.request) params.system = system.request;
    if (tools.request.length) params.tools = tools.request;
    return { params, contextSeq: this.contextSeq, elidedSeqs: [...this.elided], estimatedTokens: total };
  }

  private toolsFor(from: ContextOptions['tools']): NonNullable<ContextBuilder['tools']> {
    if (this.tools?.from !== from) {
      const request: RequestTool[] = from.map((t) => ({ ...t }));
      const tokens = estimateTokens(request);
      if (request.length) request[request.length - 1] = { ...request[request.length - 1]!, cache_control: CACHE_MARK };
      this.tools = { from, request, tokens };
    }
    return this.tools;
  }

  private systemFor(from: string | null): NonNullable<ContextBuilder['system']> {
    if (!this.system || this.system.from !== from) {
      const plain: Block[] | undefined = from ? [{ type: 'text', text: from }] : undefined;
      this.system = { from, request: plain && [{ ...plain[0]!, cache_control: CACHE_MARK }], tokens: estimateTokens(plain ?? []) };
    }
    return this.system;
  }
}
