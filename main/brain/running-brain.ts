import type { LoggedEvent } from '../session/types';
import type { BrainOutbox } from './brain-outbox';
import type { HostToBrain } from './ipc-protocol';

/** A running brain process, whatever started it (child_process.fork, Electron's utilityProcess). */
export interface BrainChild {
  send(message: HostToBrain): void;
  /** Messages from the brain, unchecked: the supervisor validates each one. */
  onMessage(listener: (message: unknown) => void): void;
  onExit(listener: (code: number | null, signal: string | null) => void): void;
  kill(): void;
  readonly pid: number | undefined;
}

/** What the supervisor keeps of a session's running brain. */
export interface RunningBrain {
  child: BrainChild;
  calls: Map<number, AbortController>;
  /** Position of the newest input (a message, a result) appended since the brain started. */
  lastInput: number;
  /** Where the brain last said it had nothing to do. */
  idleThrough?: number;
  /** What its last `session.status_idle` handled through (its turn is over; its `idle` may still be on the way). */
  turnEnded?: number;
  /** Events appended while this brain's own append runs: sent after its reply, less its own. */
  held?: LoggedEvent[];
  /**
   * Ids of tool calls this brain appended and has not run yet: a call it sends right behind its
   * append is known to be in the log without a query. Bounded (MAX_LOGGED_CALLS); past it, the log is asked.
   */
  loggedCalls: Set<string>;
  /** Malformed messages so far (the first few are reported). */
  rejected: number;
  /** What the host sends it, in as few writes as order allows. */
  out: BrainOutbox;
}
