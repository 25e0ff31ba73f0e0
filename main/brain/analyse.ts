import type { LoggedEvent } from '../session/types';

/** Events that give the model something new to respond to. */
const INPUT_TYPES = new Set(['user.message', 'agent.tool_result', 'agent.mcp_tool_result', 'user.tool_result', 'user.custom_tool_result', 'system.message']);

/**
 * Events from outside the brain that can give a session work: the host starts a brain for them
 * (a `user.interrupt` matters only to a session that is running, which already has a brain).
 */
export const WAKING_TYPES: ReadonlySet<string> = new Set(['user.message', 'user.tool_result', 'user.custom_tool_result', 'system.message', 'user.tool_confirmation']);

/** What a brain (or the supervisor) can tell from a session's log alone. */
export interface LogAnalysis {
  /** Status from the last status event. */
  status: 'idle' | 'running' | 'rescheduling' | 'terminated';
  lastSeq: number;
  /** A model request with no `span.model_request_end`: its brain died mid-request. */
  openRequest?: LoggedEvent;
  /**
   * Tool calls (the hands' and MCP servers') with no result yet that are not held for the user,
   * oldest first: calls a brain was running when it stopped (their outcome is unknown).
   */
  unansweredToolUses: LoggedEvent[];
  /** Calls under `always_ask` waiting for the user's `user.tool_confirmation`, oldest first. */
  awaitingConfirmation: LoggedEvent[];
  /** Calls the user confirmed (allow or deny) that no brain has taken up yet. */
  confirmedToolUses: ConfirmedCall[];
  /** Custom tool calls waiting for the client's `user.custom_tool_result`. */
  pendingCustomToolUses: LoggedEvent[];
  /** A `user.interrupt` that no turn-ending idle has answered yet. */
  interruptPending?: LoggedEvent;
  /** The last position the model has seen (a finished request's context) or a turn has handled. */
  handledThrough: number;
  /** Input the model has not seen yet (a message, tool results), and nothing blocks a request. */
  needsModel: boolean;
  /** Failed model requests since the last one that succeeded (for retry limits across restarts). */
  failedRequestsInARow: number;
}

/** A call the user answered, and the answer (`user.tool_confirmation`). */
export interface ConfirmedCall {
  use: LoggedEvent;
  confirmation: LoggedEvent;
}

/** Where a call under `always_ask` stands. */
interface Asked {
  confirmation?: LoggedEvent;
  /** A brain logged that it starts running it (`session.status_running.run_confirmed`). */
  started: boolean;
}

/**
 * Folds a session's log, one event at a time, into what is pending. A brain keeps one and folds
 * each event as it learns of it, so knowing what to do next costs nothing however long the log
 * is; `analyse(events)` is the same fold over a whole log. Brain events carry a few Corral fields
 * for this: `span.model_request_start.context_seq` (the last event the request included),
 * `span.model_request_end.stop_reason`, and `session.status_idle.handled_through`.
 */
export class LogFold {
  private status: LogAnalysis['status'] = 'idle';
  private openRequest: LoggedEvent | undefined;
  private readonly toolUses = new Map<string, LoggedEvent>();
  private readonly customToolUses = new Map<string, LoggedEvent>();
  /** Calls under always_ask with no result yet. */
  private readonly asked = new Map<string, Asked>();
  private interruptPending: LoggedEvent | undefined;
  private handledThrough = 0;
  private lastInputSeq = 0;
  private failedInARow = 0;
  private lastSeq = 0;
  /** context_seq of requests not yet ended (an end needs its start's). */
  private readonly contextOf = new Map<string, number>();

  /** Takes the next event of the log (in order). */
  fold(e: LoggedEvent): void {
    this.lastSeq = e.seq;
    switch (e.type) {
      case 'session.status_running': {
        this.status = 'running';
        const asked = typeof e.run_confirmed === 'string' ? this.asked.get(e.run_confirmed) : undefined;
        if (asked?.confirmation) asked.started = true;
        break;
      }
      case 'session.status_rescheduled':
        this.status = 'rescheduling';
        break;
      case 'session.status_terminated':
        this.status = 'terminated';
        break;
      case 'session.status_idle':
        this.status = 'idle';
        this.interruptPending = undefined;
        this.handledThrough = Math.max(this.handledThrough, num(e.handled_through));
        break;
      case 'user.interrupt':
        if (this.status !== 'idle' || this.openRequest || this.toolUses.size > 0) this.interruptPending = e;
        // What came before an interrupt is not to be answered any more.
        this.handledThrough = Math.max(this.handledThrough, e.seq);
        break;
      case 'span.model_request_start':
        this.openRequest = e;
        this.contextOf.set(e.id, num(e.context_seq));
        break;
      case 'span.model_request_end': {
        this.openRequest = undefined;
        const startId = String(e.model_request_start_id);
        if (e.is_error) this.failedInARow += 1;
        else {
          this.failedInARow = 0;
          this.handledThrough = Math.max(this.handledThrough, this.contextOf.get(startId) ?? 0);
          // The API paused a long server-tool turn: the reply so far is sent back to continue it.
          if (e.stop_reason === 'pause_turn') this.lastInputSeq = e.seq;
        }
        this.contextOf.delete(startId);
        break;
      }
      case 'agent.tool_use':
      case 'agent.mcp_tool_use':
        if (e.server_block) break; // the model provider's own tool: already run, its result in the same reply
        this.toolUses.set(e.id, e);
        if (e.evaluated_permission === 'ask') this.asked.set(e.id, { started: false });
        break;
      case 'user.tool_confirmation': {
        // The door refuses any other confirmation; the first answer counts all the same.
        const asked = this.asked.get(String(e.tool_use_id));
        if (asked && !asked.confirmation) asked.confirmation = e;
        break;
      }
      case 'agent.tool_result':
      case 'user.tool_result':
        this.toolUses.delete(String(e.tool_use_id));
        this.asked.delete(String(e.tool_use_id));
        break;
      case 'agent.mcp_tool_result':
        this.toolUses.delete(String(e.mcp_tool_use_id));
        break;
      case 'agent.custom_tool_use':
        this.customToolUses.set(e.id, e);
        break;
      case 'user.custom_tool_result':
        this.customToolUses.delete(String(e.custom_tool_use_id));
        break;
    }
    // A server tool's result is part of the model's own reply, not something new for it.
    if (INPUT_TYPES.has(e.type) && !e.server_block) this.lastInputSeq = e.seq;
  }

  /** What is pending now (costs the number of pending calls, not the length of the log). */
  analysis(): LogAnalysis {
    const unansweredToolUses: LoggedEvent[] = [];
    const awaitingConfirmation: LoggedEvent[] = [];
    const confirmedToolUses: ConfirmedCall[] = [];
    for (const use of this.toolUses.values()) {
      const asked = this.asked.get(use.id);
      if (!asked || asked.started) unansweredToolUses.push(use);
      else if (asked.confirmation) confirmedToolUses.push({ use, confirmation: asked.confirmation });
      else awaitingConfirmation.push(use);
    }
    const pendingCustomToolUses = [...this.customToolUses.values()];
    const needsModel =
      this.lastInputSeq > this.handledThrough &&
      !this.openRequest &&
      !this.interruptPending &&
      unansweredToolUses.length === 0 &&
      awaitingConfirmation.length === 0 &&
      confirmedToolUses.length === 0 &&
      pendingCustomToolUses.length === 0;
    return {
      status: this.status,
      lastSeq: this.lastSeq,
      openRequest: this.openRequest,
      unansweredToolUses,
      awaitingConfirmation,
      confirmedToolUses,
      pendingCustomToolUses,
      interruptPending: this.interruptPending,
      handledThrough: this.handledThrough,
      needsModel,
      failedRequestsInARow: this.failedInARow,
    };
  }
}

/** Folds a whole log into what is pending (pure: tests and tools use it on a log they read). */
export function analyse(events: readonly LoggedEvent[]): LogAnalysis {
  const fold = new LogFold();
  for (const e of events) fold.fold(e);
  return fold.analysis();
}

function num(v: unknown): number {
  return typeof v === 'number' && Number.isFinite(v) ? v : 0;
}

/** True when a brain has something to do for this session. */
export function hasWork(a: LogAnalysis): boolean {
  return (
    a.needsModel ||
    a.openRequest !== undefined ||
    a.interruptPending !== undefined ||
    a.unansweredToolUses.length > 0 ||
    a.confirmedToolUses.length > 0 ||
    (a.awaitingConfirmation.length > 0 && a.status !== 'idle') ||
    (a.pendingCustomToolUses.length > 0 && a.status !== 'idle') ||
    a.status === 'running' ||
    a.status === 'rescheduling'
  );
}
