import { HAND_MEMBERSHIP_EVENTS } from '../hands/membership';
import type { EventSlice, LoggedEvent } from '../session/types';
import { LogFold, type LogAnalysis } from './analyse';
import { ContextBuilder } from './context-builder';

/** Events per read of the log (a fresh brain's first read comes in pages this size). */
const PAGE = 2000;
const MEMBERSHIP = new Set<string>(HAND_MEMBERSHIP_EVENTS);

/**
 * What a brain knows of its session's log: every event once, in order, folded as it arrives into
 * what is pending and into the model's transcript. A fresh brain reads the log once; after that
 * the host passes on each appended event (and the brain's own appends come back in their
 * replies), so nothing is read twice and nothing is kept that the folds do not need.
 */
export class SessionView {
  readonly pending = new LogFold();
  readonly context = new ContextBuilder();
  /** Bumped by each event that changes which hands the session holds. */
  handsVersion = 0;
  private seq = 0;
  private loaded = false;
  /** Events that arrived ahead of a gap, by position (normally none for long). */
  private held: LoggedEvent[] = [];

  constructor(private readonly read: (slice: EventSlice) => Promise<LoggedEvent[]>) {}

  /** The last position folded in. */
  get lastSeq(): number {
    return this.seq;
  }

  analysis(): LogAnalysis {
    return this.pending.analysis();
  }

  /** Takes events from wherever they came (a push, a reply); duplicates and old ones are ignored. */
  accept(events: readonly LoggedEvent[]): void {
    for (const e of events) if (e.seq > this.seq) this.hold(e);
    this.drain();
  }

  /**
   * Brings the view up to date: the first time, reads the whole log; afterwards, reads only what
   * is missing before an event that arrived early (normally nothing: events arrive in order).
   */
  async catchUp(): Promise<void> {
    for (;;) {
      this.drain();
      const gapEnd = this.held.length > 0 ? this.held[0]!.seq - 1 : undefined;
      if (this.loaded && gapEnd === undefined) return;
      const page = await this.read({ after: this.seq, limit: PAGE, ...(gapEnd !== undefined ? { to: gapEnd } : {}) });
      for (const e of page) if (e.seq === this.seq + 1) this.take(e);
      if (page.length < PAGE) {
        if (gapEnd === undefined) this.loaded = true;
        else if (this.seq < gapEnd) throw new Error(`the log has no events ${this.seq + 1}–${gapEnd}, yet ${gapEnd + 1} came`);
      }
    }
  }

  private take(e: LoggedEvent): void {
    this.seq = e.seq;
    this.pending.fold(e);
    this.context.fold(e);
    if (MEMBERSHIP.has(e.type)) this.handsVersion += 1;
  }

  private hold(e: LoggedEvent): void {
    let i = this.held.length;
    while (i > 0 && this.held[i - 1]!.seq > e.seq) i--;
    if (this.held[i - 1]?.seq !== e.seq) this.held.splice(i, 0, e);
  }

  private drain(): void {
    while (this.held.length > 0 && this.held[0]!.seq <= this.seq + 1) {
      const e = this.held.shift()!;
      if (e.seq === this.seq + 1) this.take(e);
    }
  }
}
