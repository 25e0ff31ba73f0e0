import type { LoggedEvent } from '../session/types';

/** Events that give the model something new to respond to. */
const INPUT_TYPES = new Set(['user.message', 'agent.tool_result', 'user.tool_result', 'user.custom_tool_result', 'system.message']);

/** What a brain (or the supervisor) can tell from a session's log alone. */
export interface LogAnalysis {
  /** Status from the last status event. */
  status: 'idle' | 'running' | 'rescheduling' | 'terminated';
  lastSeq: number;
  /** A model request with no `span.model_request_end`: its brain died mid-request. */
  openRequest?: LoggedEvent;
  /** Tool calls with no result yet, oldest first. */
  unansweredToolUses: LoggedEvent[];
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

/**
 * Folds a session's log into what is pending. Pure: the brain runs it at wake and after each
 * step, the supervisor runs it when a brain exits. Brain events carry a few Corral fields for
 * this: `span.model_request_start.context_seq` (the last event the request included),
 * `span.model_request_end.stop_reason`, and `session.status_idle.handled_through`.
 */
export function analyse(events: readonly LoggedEvent[]): LogAnalysis {
  let status: LogAnalysis['status'] = 'idle';
  let openRequest: LoggedEvent | undefined;
  const toolUses = new Map<string, LoggedEvent>();
  const customToolUses = new Map<string, LoggedEvent>();
  let interruptPending: LoggedEvent | undefined;
  let handledThrough = 0;
  let lastInputSeq = 0;
  let failedInARow = 0;
  let lastSeq = 0;
  const contextOf = new Map<string, number>();

  for (const e of events) {
    lastSeq = e.seq;
    switch (e.type) {
      case 'session.status_running':
        status = 'running';
        break;
      case 'session.status_rescheduled':
        status = 'rescheduling';
        break;
      case 'session.status_terminated':
        status = 'terminated';
        break;
      case 'session.status_idle':
        status = 'idle';
        interruptPending = undefined;
        handledThrough = Math.max(handledThrough, num(e.handled_through));
        break;
      case 'user.interrupt':
        if (status !== 'idle' || openRequest || toolUses.size > 0) interruptPending = e;
        // What came before an interrupt is not to be answered any more.
        handledThrough = Math.max(handledThrough, e.seq);
        break;
      case 'span.model_request_start':
        openRequest = e;
        contextOf.set(e.id, num(e.context_seq));
        break;
      case 'span.model_request_end':
        openRequest = undefined;
        if (e.is_error) failedInARow += 1;
        else {
          failedInARow = 0;
          handledThrough = Math.max(handledThrough, contextOf.get(String(e.model_request_start_id)) ?? 0);
        }
        break;
      case 'agent.tool_use':
        toolUses.set(e.id, e);
        break;
      case 'agent.tool_result':
      case 'user.tool_result':
        toolUses.delete(String(e.tool_use_id));
        break;
      case 'agent.custom_tool_use':
        customToolUses.set(e.id, e);
        break;
      case 'user.custom_tool_result':
        customToolUses.delete(String(e.custom_tool_use_id));
        break;
    }
    if (INPUT_TYPES.has(e.type)) lastInputSeq = e.seq;
  }

  const unansweredToolUses = [...toolUses.values()];
  const pendingCustomToolUses = [...customToolUses.values()];
  const needsModel =
    lastInputSeq > handledThrough && !openRequest && !interruptPending && unansweredToolUses.length === 0 && pendingCustomToolUses.length === 0;
  return {
    status,
    lastSeq,
    openRequest,
    unansweredToolUses,
    pendingCustomToolUses,
    interruptPending,
    handledThrough,
    needsModel,
    failedRequestsInARow: failedInARow,
  };
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
    (a.pendingCustomToolUses.length > 0 && a.status !== 'idle') ||
    a.status === 'running' ||
    a.status === 'rescheduling'
  );
}
