import type { UiEvent } from '../../../main/api/ui/contract';
import { HandLanes } from './hand-lanes';
import { lastAtOrBefore } from './search';

export { indexAtOrBefore, indexOfSeq, lastAtOrBefore } from './search';

/**
 * Everything the session views derive from the log, built incrementally as events are
 * appended (each event is looked at once), so a new event costs O(1) and any position's state
 * is a binary search away: no snapshot replay, no full pass per frame.
 */

/** Colour groups of the timeline (rows, density strip). */
export const KINDS = ['user', 'message', 'thinking', 'tool', 'result', 'failed', 'hand', 'status', 'error', 'span', 'other'] as const;
export type Kind = (typeof KINDS)[number];

/** The colour group of an event. */
export function kindOf(e: UiEvent): Kind {
  const t = e.type;
  if (t === 'session.error' || (t === 'hand.lost')) return 'error';
  if (t.startsWith('user.')) return 'user';
  if (t === 'agent.message') return 'message';
  if (t === 'agent.thinking') return 'thinking';
  if (t.endsWith('tool_use')) return 'tool';
  if (t.endsWith('tool_result')) return e.is_error === true ? 'failed' : 'result';
  if (t.startsWith('hand.')) return 'hand';
  if (t.startsWith('session.')) return 'status';
  if (t.startsWith('span.')) return e.is_error === true ? 'failed' : 'span';
  return 'other';
}

export type Status = 'idle' | 'running' | 'rescheduling' | 'terminated';
const STATUS_OF: Record<string, Status> = {
  'session.status_idle': 'idle',
  'session.status_running': 'running',
  'session.status_rescheduled': 'rescheduling',
  'session.status_terminated': 'terminated',
};

/** One model request's usage (from its `span.model_request_end`). */
export interface RequestUsage {
  index: number;
  turn: number;
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  /** Time to first token (ms): `first_token_ms`, else the time to its first logged block. */
  ttftMs: number | null;
  failed: boolean;
}

/** Usage of one turn (a user message and everything up to the next). */
export interface TurnUsage {
  turn: number;
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  requests: number;
  /** Time to first token of the turn's first request (ms). */
  ttftMs: number | null;
}

const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : 0);

export class SessionIndex {
  /** Events indexed so far (the store's array, by reference). */
  count = 0;
  readonly kinds: Kind[] = [];
  /** Turn number (0 before the first user message) of each event. */
  readonly turnOf: number[] = [];
  /** Event index where each turn starts. */
  readonly turnStarts: number[] = [];
  readonly times: number[] = [];
  readonly hands = new HandLanes();
  /** Status changes: event indexes and the status each sets. */
  private readonly statusAt: number[] = [];
  private readonly statusVal: Status[] = [];
  /** Indexes of user and agent messages (the transcript). */
  readonly messages: number[] = [];
  readonly requests: RequestUsage[] = [];
  /** Running totals after each request (for usage at any position by binary search). */
  private readonly totals: { input: number; output: number; cacheRead: number; cacheWrite: number }[] = [];
  private readonly requestAt: number[] = [];
  private turnCache: { n: number; turns: TurnUsage[] } = { n: -1, turns: [] };
  /** Tool use id → its event index, and tool use index → its result index. */
  readonly toolUseById = new Map<string, number>();
  readonly resultOfUse = new Map<number, number>();
  readonly useOfResult = new Map<number, number>();
  private openRequests = new Map<string, { index: number; firstBlockAt: number | null }>();
  private lastRequest: string | null = null;

  /** Indexes `events[count..]` (events only ever grow at the end, ascending by seq). */
  update(events: readonly UiEvent[]): void {
    for (let i = this.count; i < events.length; i++) this.add(events[i]!, i);
    this.count = events.length;
  }

  private add(e: UiEvent, i: number): void {
    this.kinds.push(kindOf(e));
    const t = Date.parse(e.processed_at);
    this.times.push(Number.isNaN(t) ? (this.times[i - 1] ?? 0) : t);
    if (e.type === 'user.message') this.turnStarts.push(i);
    this.turnOf.push(this.turnStarts.length);
    const status = STATUS_OF[e.type];
    if (status) {
      this.statusAt.push(i);
      this.statusVal.push(status);
    }
    if (e.type === 'user.message' || e.type === 'agent.message') this.messages.push(i);
    if (e.type === 'span.model_request_start') {
      this.openRequests.set(e.id, { index: i, firstBlockAt: null });
      this.lastRequest = e.id;
    } else if (e.type === 'agent.message' || e.type === 'agent.thinking' || e.type.endsWith('tool_use')) {
      const open = this.lastRequest ? this.openRequests.get(this.lastRequest) : undefined;
      if (open && open.firstBlockAt === null) open.firstBlockAt = this.times[i]!;
    } else if (e.type === 'span.model_request_end') this.addRequestEnd(e, i);
    if (e.type.endsWith('tool_use')) this.toolUseById.set(e.id, i);
    else if (e.type === 'agent.tool_result' || e.type === 'agent.mcp_tool_result' || e.type === 'user.tool_result' || e.type === 'user.custom_tool_result') {
      const useId = String(e.tool_use_id ?? e.mcp_tool_use_id ?? e.custom_tool_use_id ?? '');
      const use = this.toolUseById.get(useId);
      if (use !== undefined) {
        this.resultOfUse.set(use, i);
        this.useOfResult.set(i, use);
      }
    }
    this.hands.add(e, i, this);
  }

  private addRequestEnd(e: UiEvent, i: number): void {
    const startId = String(e.model_request_start_id ?? '');
    const open = this.openRequests.get(startId);
    this.openRequests.delete(startId);
    const u = (e.model_usage ?? {}) as Record<string, unknown>;
    const startT = open ? this.times[open.index]! : null;
    const ttft = typeof e.first_token_ms === 'number' ? e.first_token_ms : startT !== null && open?.firstBlockAt != null ? open.firstBlockAt - startT : null;
    this.requests.push({
      index: i,
      turn: this.turnOf[i]!,
      input: num(u.input_tokens),
      output: num(u.output_tokens),
      cacheRead: num(u.cache_read_input_tokens),
      cacheWrite: num(u.cache_creation_input_tokens),
      ttftMs: ttft,
      failed: e.is_error === true,
    });
    const r = this.requests[this.requests.length - 1]!;
    const prev = this.totals[this.totals.length - 1] ?? { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 };
    this.totals.push({ input: prev.input + r.input, output: prev.output + r.output, cacheRead: prev.cacheRead + r.cacheRead, cacheWrite: prev.cacheWrite + r.cacheWrite });
    this.requestAt.push(i);
  }

  /** The status the session had once event `i` was logged. */
  statusAfter(i: number): Status {
    const k = lastAtOrBefore(this.statusAt, i);
    return k < 0 ? 'idle' : this.statusVal[k]!;
  }

  /** The last `n` messages (indexes) at or before event `i`. */
  transcriptAt(i: number, n: number): number[] {
    const k = lastAtOrBefore(this.messages, i);
    return this.messages.slice(Math.max(0, k - n + 1), k + 1);
  }

  /** Tokens used by the requests finished at or before event `i`. */
  usageThrough(i: number): { input: number; output: number; cacheRead: number; cacheWrite: number; requests: number } {
    const k = lastAtOrBefore(this.requestAt, i);
    return k < 0 ? { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, requests: 0 } : { ...this.totals[k]!, requests: k + 1 };
  }

  /** Usage per turn, for the chart. */
  turnUsage(): TurnUsage[] {
    if (this.turnCache.n === this.requests.length) return this.turnCache.turns;
    const byTurn = new Map<number, TurnUsage>();
    for (const r of this.requests) {
      let t = byTurn.get(r.turn);
      if (!t) byTurn.set(r.turn, (t = { turn: r.turn, input: 0, output: 0, cacheRead: 0, cacheWrite: 0, requests: 0, ttftMs: r.ttftMs }));
      t.input += r.input;
      t.output += r.output;
      t.cacheRead += r.cacheRead;
      t.cacheWrite += r.cacheWrite;
      t.requests++;
    }
    this.turnCache = { n: this.requests.length, turns: [...byTurn.values()] };
    return this.turnCache.turns;
  }

  /** The index of the previous (dir -1) or next (dir 1) event of the same kind as event `i`. */
  sameKind(i: number, dir: 1 | -1): number {
    const kind = this.kinds[i];
    for (let j = i + dir; j >= 0 && j < this.count; j += dir) if (this.kinds[j] === kind) return j;
    return i;
  }
}

