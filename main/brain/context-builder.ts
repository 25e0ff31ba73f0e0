import type { LoggedEvent } from '../session/types';
import { budgetOf, type BuiltRequest, type ContextOptions, type RequestTool } from './context';
import { charsToDrop, dropNote } from './context-drop';
import { CACHE_MARK, elisionNote, elisionSaving, estimateTokens, partOf, tokensOfChars, trimPrefill, type Block, type Message } from './transcript';

/** JSON length of a message with no blocks, by role. */
const EMPTY_MESSAGE_CHARS = {
  user: JSON.stringify({ role: 'user', content: [] }).length,
  assistant: JSON.stringify({ role: 'assistant', content: [] }).length,
};

interface MessageMeta {
  /** JSON length of the message with every block as first folded (before any elision). */
  chars: number;
  /** JSON length with each of its tool results elided (what it costs when a cut is decided). */
  elidedChars: number;
  /** Tool results lead a user message: how many there are at its head. */
  results: number;
  /** Position of its first event. */
  firstSeq: number;
}

interface Candidate {
  block: Block;
  /** Its content as folded (given back when a new cut brings it back). */
  content: unknown;
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
 * oldest tool results (in its transcript, never in the log) and never brings one back while the
 * request starts at the same place, so the prefix the model has cached stays the same from one
 * request to the next. When even that is not enough, the oldest messages are dropped in steps
 * (context-drop.ts); a new start is a new prefix, so elision starts over from it. (If the options
 * shrink the request later — a larger window, fewer tools — what was elided stays elided, where
 * the pure reference would bring it back.)
 *
 * A built request shares objects with the transcript: send or copy it before folding more.
 */
export class ContextBuilder {
  private readonly messages: Message[] = [];
  private readonly meta: MessageMeta[] = [];
  /**
   * Running sums over the messages before each index (each message's length plus its comma), as
   * folded and as if elided: the size of any run of whole messages in constant time.
   */
  private readonly charsBefore: number[] = [];
  private readonly elidedCharsBefore: number[] = [];
  /** Index of the first user message: the request starts there (-1: none yet). */
  private firstUser = -1;
  /** Index of the message the request starts at (after the drop note), once messages are dropped. */
  private cut = -1;
  private contextSeq = 0;
  /** Events folded so far that added blocks to the transcript. */
  private parts = 0;
  /** Tool results in log order: the elision order. */
  private readonly candidates: Candidate[] = [];
  /** Candidates from `cut` up to this one are elided; all others hold their content as folded. */
  private nextCandidate = 0;
  private elided: number[] = [];
  private savedTokens = 0;
  private tools?: { from: readonly ContextOptions['tools'][number][]; request: RequestTool[]; tokens: number };
  private system?: { from: string | null; request: Block[] | undefined; tokens: number };

  /** The last log position folded in. */
  get lastSeq(): number {
    return this.contextSeq;
  }

  /** How many events folded so far added to the transcript (a held request's check, held-request.ts). */
  get foldedParts(): number {
    return this.parts;
  }

  /** Takes the next event of the log (in order). */
  fold(e: LoggedEvent): void {
    this.contextSeq = e.seq;
    const part = partOf(e);
    if (!part || part.blocks.length === 0) return;
    this.parts += 1;
    let index = this.messages.length - 1;
    if (index < 0 || this.messages[index]!.role !== part.role) {
      if (index >= 0) {
        // The message before is complete: its lengths join the running sums.
        this.charsBefore.push(this.charsBefore[index]! + this.meta[index]!.chars + 1);
        this.elidedCharsBefore.push(this.elidedCharsBefore[index]! + this.meta[index]!.elidedChars + 1);
      } else {
        this.charsBefore.push(0);
        this.elidedCharsBefore.push(0);
      }
      this.messages.push({ role: part.role, content: [] });
      this.meta.push({ chars: EMPTY_MESSAGE_CHARS[part.role], elidedChars: EMPTY_MESSAGE_CHARS[part.role], results: 0, firstSeq: e.seq });
      index += 1;
      if (this.firstUser < 0 && part.role === 'user') this.firstUser = this.cut = index;
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
      meta.elidedChars += result ? chars - contentChars + JSON.stringify(elisionNote(contentChars, e.seq)).length : chars;
      if (result) {
        // Tool results lead their user message, in log order (a message typed mid-tool lands after).
        message.content.splice(meta.results, 0, block);
        meta.results += 1;
        this.candidates.push({ block, content: block.content, seq: e.seq, contentChars, message: index });
      } else {
        message.content.push(block);
      }
    }
  }

  /**
   * The request as it would be once `events` (the rest of a reply, then a tool's result answering
   * it) were folded in, with room for `reserveChars` more characters of that result's content:
   * what a brain sends ahead while the tool runs (held-request.ts), given to `use` (it shares
   * objects with the transcript, undone after). Nothing of it is kept. Undefined when the result
   * would not start a user turn of its own, or the request would need a new start or an elision:
   * those depend on the result's size, which is not known yet.
   */
  whatIf<T>(events: readonly LoggedEvent[], reserveChars: number, opts: ContextOptions, use: (built: BuiltRequest) => T): T | undefined {
    // Only the last event may be a user's, and it must start a user turn: blocks are then only
    // ever added at the end of the newest message (undone below).
    if (events.some((e, i) => (partOf(e)?.role === 'user') !== (i === events.length - 1))) return undefined;
    const replied = events.some((e) => partOf(e)?.role === 'assistant');
    if (!replied && this.messages.at(-1)?.role !== 'assistant') return undefined;
    const last = this.messages.at(-1);
    const before = {
      messages: this.messages.length,
      lastBlocks: last?.content.length ?? 0,
      lastMeta: this.meta.at(-1) && { ...this.meta.at(-1)! },
      candidates: this.candidates.length,
      seq: this.contextSeq,
      parts: this.parts,
      firstUser: this.firstUser,
      cut: this.cut,
    };
    try {
      for (const e of events) this.fold(e);
      const turn = this.messages.at(-1)!;
      if (turn.role !== 'user' || turn.content.length !== 1 || this.messages.at(-2)?.role !== 'assistant') return undefined;
      this.meta.at(-1)!.chars += reserveChars;
      const built = this.build(opts, true);
      return built && use(built);
    } finally {
      // Back to as it was: the messages fold() added (with their sums), the blocks it added to
      // the newest one, and the candidates.
      for (const a of [this.messages, this.meta, this.charsBefore, this.elidedCharsBefore]) a.length = before.messages;
      if (last) last.content.length = before.lastBlocks;
      if (before.lastMeta) Object.assign(this.meta.at(-1)!, before.lastMeta);
      this.candidates.length = before.candidates;
      this.contextSeq = before.seq;
      this.parts = before.parts;
      this.firstUser = before.firstUser;
      this.cut = before.cut;
    }
  }

  /** The request for everything folded so far (`dry`: changing nothing, else undefined). */
  build(opts: ContextOptions): BuiltRequest;
  build(opts: ContextOptions, dry: true): BuiltRequest | undefined;
  build(opts: ContextOptions, dry = false): BuiltRequest | undefined {
    const tools = this.toolsFor(opts.tools);
    const system = this.systemFor(opts.system);
    const budget = budgetOf(opts);
    if (this.firstUser < 0) {
      const params: BuiltRequest['params'] = { model: opts.model, max_tokens: opts.maxTokens, ...opts.modelOptions, messages: [] };
      if (system.request) params.system = system.request;
      if (tools.request.length) params.tools = tools.request;
      return { params, contextSeq: this.contextSeq, elidedSeqs: [], estimatedTokens: tokensOfChars(2) + system.tokens + tools.tokens };
    }
    // The newest message, as sent: a trailing assistant message is a prefill, trimmed or left out.
    let last = this.messages.length - 1;
    let tail: Message = this.messages[last]!;
    let tailChars = this.meta[last]!.chars;
    if (tail.role === 'assistant') {
      const content = trimPrefill(tail.content);
      if (content.length === 0) {
        last -= 1;
        tail = this.messages[last]!;
        tailChars = this.meta[last]!.chars;
      } else {
        tail = { role: 'assistant', content };
        tailChars = JSON.stringify(tail).length;
      }
    }

    const cut = this.cutFor(last, system.tokens + tools.tokens, budget);
    if (cut !== this.cut) {
      if (dry) return undefined;
      this.startAt(cut);
    }
    const messages = this.messages.slice(cut, last + 1);
    messages[messages.length - 1] = tail;
    // Each message's length and comma from the start to the newest, the newest's as sent.
    let chars = this.charsBefore[last]! - this.charsBefore[cut]! + tailChars;
    let droppedThrough: number | undefined;
    if (cut > this.firstUser) {
      droppedThrough = this.meta[cut]!.firstSeq - 1;
      const note = dropNote(droppedThrough, this.meta[this.firstUser]!.firstSeq);
      messages.unshift(note);
      chars += JSON.stringify(note).length + 1;
    }
    const messageChars = 2 + chars;

    // Oldest tool results first, never one from the newest message; elided for good while the
    // request starts at the same message.
    let total = tokensOfChars(messageChars) + system.tokens + tools.tokens - this.savedTokens;
    while (total > budget && this.nextCandidate < this.candidates.length && this.candidates[this.nextCandidate]!.message < last) {
      if (dry) return undefined;
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
    const built: BuiltRequest = { params, contextSeq: this.contextSeq, elidedSeqs: [...this.elided], estimatedTokens: total };
    if (droppedThrough !== undefined) built.droppedThrough = droppedThrough;
    return built;
  }

  /**
   * The message the request starts at: the first user message, or further on when the oldest
   * messages must be dropped (the same rule as the reference's, in logarithmic time).
   */
  private cutFor(last: number, fixedTokens: number, budget: number): number {
    const from = this.firstUser;
    const need = charsToDrop(this.elidedCharsBefore[last]! - this.elidedCharsBefore[from]!, fixedTokens, budget);
    if (need === 0) return from;
    // The first message with at least `need` characters before it (from the first user message).
    let lo = from + 1;
    let hi = last + 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.elidedCharsBefore[mid]! - this.elidedCharsBefore[from]! >= need) hi = mid;
      else lo = mid + 1;
    }
    // Roles alternate: the start is that message or the next, an assistant's; else the last assistant's.
    for (const k of [lo, lo + 1]) if (k <= last && this.messages[k]!.role === 'assistant') return k;
    for (const k of [last, last - 1]) if (k > from && this.messages[k]!.role === 'assistant') return k;
    return from;
  }

  /** Moves the request's start: what was elided gets its content back, and elision restarts there. */
  private startAt(cut: number): void {
    let i = this.firstCandidateFrom(this.cut);
    for (; i < this.nextCandidate; i++) this.candidates[i]!.block.content = this.candidates[i]!.content;
    this.cut = cut;
    this.nextCandidate = this.firstCandidateFrom(cut);
    this.elided = [];
    this.savedTokens = 0;
  }

  /** Index of the first candidate in message `index` or after it. */
  private firstCandidateFrom(index: number): number {
    let lo = 0;
    let hi = this.candidates.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.candidates[mid]!.message >= index) hi = mid;
      else lo = mid + 1;
    }
    return lo;
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
