import type { UiEvent } from '../../../main/api/ui/contract';
import { lastAtOrBefore } from './search';

/** What a hand was doing at a moment. */
export type LaneState = 'held' | 'provisioning' | 'ready' | 'busy' | 'lost' | 'gone';

/** One hand's life in a session, from the hand.* events and the tool calls that ran on it. */
export interface Lane {
  name: string;
  /** Environment type (local, ssh, docker, adb) once known. */
  kind: string | null;
  /** State changes: event indexes (ascending) and the state from there on. */
  at: number[];
  state: LaneState[];
  /** Each provisioning: where it started, where it ended (ready or lost) and how long it took. */
  provisions: { start: number; end: number | null; ms: number | null; ok: boolean | null; unsandboxed?: string | null }[];
  losses: { index: number; reason: string }[];
  /** Indexes of the tool calls run on it. */
  calls: number[];
  /** Where it was handed over (to which session) or released. */
  departures: { index: number; to: string | null }[];
  arrivals: { index: number; from: string | null }[];
}

/** A hand's state at one moment, with what has happened to it so far. */
export interface HandAt {
  name: string;
  kind: string | null;
  state: LaneState;
  /** Last finished provisioning's duration. */
  provisionedMs: number | null;
  /** Times it was provisioned again after being lost (replaced). */
  replaced: number;
  calls: number;
  lastLoss: string | null;
  /** Why its commands run without a sandbox (a local hand that said so when ready); null: sandboxed or not local. */
  unsandboxed: string | null;
}

/** The reason in a hand.ready's `sandbox` fact when commands run unsandboxed. */
export function unsandboxedReason(e: UiEvent): string | null {
  const s = e.sandbox as { enabled?: unknown; reason?: unknown } | undefined;
  if (!s || typeof s !== 'object' || s.enabled !== false) return null;
  return typeof s.reason === 'string' && s.reason ? s.reason : 'no reason given';
}

const str = (v: unknown) => (typeof v === 'string' && v ? v : null);
/** Tools that never run on a hand. */
const NOT_ON_A_HAND = new Set(['read_session_events']);

export class HandLanes {
  readonly lanes: Lane[] = [];
  private readonly byName = new Map<string, Lane>();
  /** Tool use id → hand name, and how many calls each hand is running. */
  private readonly openCalls = new Map<string, string>();
  private readonly running = new Map<string, number>();
  /** The state under any running call. */
  private readonly base = new Map<string, LaneState>();

  /** The lane of a hand, made (held from `i`) when first seen. */
  lane(name: string, i: number): Lane {
    let lane = this.byName.get(name);
    if (!lane) {
      lane = { name, kind: null, at: [i], state: ['held'], provisions: [], losses: [], calls: [], departures: [], arrivals: [] };
      this.byName.set(name, lane);
      this.lanes.push(lane);
      this.base.set(name, 'held');
    }
    return lane;
  }

  add(e: UiEvent, i: number, _ctx: unknown): void {
    if (i === 0 && !this.byName.has('main')) this.lane('main', 0);
    const hand = str(e.hand);
    switch (e.type) {
      case 'hand.attached':
      case 'hand.received': {
        const lane = this.lane(hand ?? '?', i);
        lane.arrivals.push({ index: i, from: str(e.from_session_id) });
        // A hand handed over live (`live: true`) arrives made: no provisioning follows.
        return this.setBase(lane, e.type === 'hand.received' && e.live === true ? 'ready' : 'held', i);
      }
      case 'hand.provisioning': {
        const lane = this.lane(hand ?? 'main', i);
        lane.kind = str(e.kind) ?? lane.kind;
        lane.provisions.push({ start: i, end: null, ms: null, ok: null });
        return this.setBase(lane, 'provisioning', i);
      }
      case 'hand.ready': {
        const lane = this.lane(hand ?? 'main', i);
        lane.kind = str(e.kind) ?? lane.kind;
        const p = lane.provisions[lane.provisions.length - 1];
        if (p && p.end === null) Object.assign(p, { end: i, ms: typeof e.duration_ms === 'number' ? e.duration_ms : null, ok: true, unsandboxed: unsandboxedReason(e) });
        return this.setBase(lane, 'ready', i);
      }
      case 'hand.lost': {
        const lane = this.lane(hand ?? 'main', i);
        const p = lane.provisions[lane.provisions.length - 1];
        if (p && p.end === null) Object.assign(p, { end: i, ok: false });
        lane.losses.push({ index: i, reason: str(e.reason) ?? 'no reason given' });
        return this.setBase(lane, 'lost', i);
      }
      case 'hand.released':
      case 'hand.handed_over': {
        const lane = this.lane(hand ?? '?', i);
        lane.departures.push({ index: i, to: str(e.to_session_id) });
        this.running.set(lane.name, 0);
        return this.setBase(lane, 'gone', i);
      }
    }
    // A server tool's call (server_block: web_search, web_fetch) is run by the model provider, not a hand.
    if (e.type === 'agent.tool_use' && !NOT_ON_A_HAND.has(String(e.name)) && !e.server_block) {
      const name = str((e.input as { hand?: unknown } | undefined)?.hand) ?? 'main';
      const lane = this.lane(name, i);
      lane.calls.push(i);
      this.openCalls.set(e.id, name);
      this.running.set(name, (this.running.get(name) ?? 0) + 1);
      this.push(lane, i);
    } else if (e.type === 'agent.tool_result' || e.type === 'user.tool_result') {
      const id = String(e.tool_use_id ?? '');
      const name = this.openCalls.get(id);
      if (name === undefined) return;
      this.openCalls.delete(id);
      this.running.set(name, Math.max(0, (this.running.get(name) ?? 1) - 1));
      this.push(this.byName.get(name)!, i);
    }
  }

  private setBase(lane: Lane, state: LaneState, i: number): void {
    this.base.set(lane.name, state);
    this.push(lane, i);
  }

  /** Records the lane's visible state from event `i` on (busy over ready/held while calls run). */
  private push(lane: Lane, i: number): void {
    const base = this.base.get(lane.name) ?? 'held';
    const busy = (this.running.get(lane.name) ?? 0) > 0 && (base === 'ready' || base === 'held');
    const state: LaneState = busy ? 'busy' : base;
    const last = lane.state.length - 1;
    if (lane.state[last] === state) return;
    if (lane.at[last] === i) lane.state[last] = state;
    else {
      lane.at.push(i);
      lane.state.push(state);
    }
  }

  /** A lane's state once event `i` was logged (before its first event: 'gone', i.e. not held). */
  stateAt(lane: Lane, i: number): LaneState | null {
    const k = lastAtOrBefore(lane.at, i);
    return k < 0 ? null : lane.state[k]!;
  }

  /** Every hand seen by event `i`, as it stood then. */
  handsAt(i: number): HandAt[] {
    const out: HandAt[] = [];
    for (const lane of this.lanes) {
      const state = this.stateAt(lane, i);
      if (state === null) continue;
      const provisions = lane.provisions.filter((p) => p.start <= i);
      const done = provisions.filter((p) => p.ok === true && p.end !== null && p.end <= i);
      const lossBefore = lane.losses.filter((l) => l.index <= i);
      out.push({
        name: lane.name,
        kind: lane.kind,
        state,
        provisionedMs: done.length ? done[done.length - 1]!.ms : null,
        replaced: Math.max(0, provisions.length - 1),
        calls: lastAtOrBefore(lane.calls, i) + 1,
        lastLoss: lossBefore.length ? lossBefore[lossBefore.length - 1]!.reason : null,
        unsandboxed: done.length ? (done[done.length - 1]!.unsandboxed ?? null) : null,
      });
    }
    return out;
  }
}
