/**
 * Requests brains sent ahead (brain/held-request.ts), held by the model proxy until the host logs
 * the tool result that fills their hole. A hold is filled only by its call's result arriving as
 * the first event of a user turn after the position the request was built through (the rest of
 * the model's reply, the assistant's, may come between); anything else, a message typed while
 * the tool ran say, lets it go unsent, and the brain sends its own request. One per session.
 */
import type { LoggedEvent } from '../session/types';
import type { HoleSpec } from './held-hole';

/** The connection holding a request. */
export interface HeldWaiter {
  /** Sends the request on with `text` in its hole. */
  fill(text: string): void;
  /** Answers the brain that the request was not sent (it sends its own). */
  drop(why: string): void;
}

export interface HeldRequestsOptions {
  /** A tool result's block as the request carries it (undefined: it cannot fill a hole). */
  render(e: LoggedEvent): string | undefined;
  /** Whether an event puts something into a user turn of the model's transcript. */
  userTurn(e: LoggedEvent): boolean;
  /** The session's first user-turn event after `seq`, if any is logged yet (another event: it cannot tell; the request is let go). */
  nextAfter(sessionId: string, seq: number): LoggedEvent | undefined;
}

export class HeldRequests {
  private readonly waiting = new Map<string, { spec: HoleSpec; waiter: HeldWaiter }>();
  /** Held requests sent on and let go so far (tests, benchmarks). */
  readonly counts = { filled: 0, letGo: 0 };

  constructor(private readonly opts: HeldRequestsOptions) {}

  /** Requests held now (tests). */
  get size(): number {
    return this.waiting.size;
  }

  /** Holds a session's request for its hole's result; returns what lets it go (the brain left). */
  hold(sessionId: string, spec: HoleSpec, held: HeldWaiter): () => void {
    const waiter = this.counted(held);
    this.waiting.get(sessionId)?.waiter.drop('another request of the session was held');
    this.waiting.delete(sessionId);
    // The tool may have ended before its request arrived: its result is then in the log already.
    const next = this.opts.nextAfter(sessionId, spec.afterSeq);
    if (next) {
      this.settle(spec, waiter, next);
      return () => {};
    }
    const entry = { spec, waiter };
    this.waiting.set(sessionId, entry);
    return () => {
      if (this.waiting.get(sessionId) === entry) this.waiting.delete(sessionId);
    };
  }

  /** Hears each event as it is logged (before anyone else acts on it). */
  logged(sessionId: string, e: LoggedEvent): void {
    const entry = this.waiting.get(sessionId);
    if (!entry || e.seq <= entry.spec.afterSeq || !this.opts.userTurn(e)) return;
    this.waiting.delete(sessionId);
    this.settle(entry.spec, entry.waiter, e);
  }

  /** Drops every held request (the host is closing). */
  clear(): void {
    for (const { waiter } of this.waiting.values()) waiter.drop('the host is closing');
    this.waiting.clear();
  }

  private counted(w: HeldWaiter): HeldWaiter {
    return {
      fill: (text) => (this.counts.filled++, w.fill(text)),
      drop: (why) => (this.counts.letGo++, w.drop(why)),
    };
  }

  private settle(spec: HoleSpec, waiter: HeldWaiter, e: LoggedEvent): void {
    if (e.type !== 'agent.tool_result' || e.tool_use_id !== spec.toolUseId) return waiter.drop("the session's next user turn is not this call's result");
    const text = this.opts.render(e);
    if (text === undefined || text.length > spec.maxChars) return waiter.drop('the result does not fit the hole');
    waiter.fill(text);
  }
}
