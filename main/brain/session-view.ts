import { HAND_MEMBERSHIP_EVENTS } from '../hands/membership';
import type { EventSlice, LoggedEvent } from '../session/types';
import { LogFold, type LogAnalysis } from './analyse';
import { ContextBuilder } from './context-builder';

/**
 * Events per read of the log: a fresh brain reads a long log in pages this size, two at a time
 * (the host's event loop is busy about a millisecond per 200 events of a page).
 */
const PAGE = 1000;
const MEMBERSHIP = new Set<string>(HAND_MEMBERSHIP_EVENTS);

/** A page of a slice of the log, and whether the slice goes on past it. */
export interface EventPage {
  events: LoggedEvent[];
  more: boolean;
}

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

  /** @param read one page of a slice, and whether the slice holds more than the page (cut by bytes) */
  constructor(private readonly read: (slice: EventSlice) => Promise<EventPage>) {}

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
   * Takes the log's first page as the host sent it with the bind (BrainPrime): when the log holds
   * no more, the view is loaded without a read; events after it arrive as they are appended.
   */
  prime(page: EventPage): void {
    this.accept(page.events);
    if (!page.more && page.events.length < PAGE && this.held.length === 0) this.loaded = true;
  }

  /**
   * Brings the view up to date: the first time, reads the whole log; afterwards, reads only what
   * is missing before an event that arrived early (normally nothing: events arrive in order).
   */
  async catchUp(): Promise<void> {
    if (!this.loaded) await this.load();
    for (;;) {
      this.drain();
      if (this.held.length === 0) return;
      const gapEnd = this.held[0]!.seq - 1;
      const { events: page } = await this.read({ after: this.seq, to: gapEnd, limit: PAGE });
      for (const e of page) if (e.seq === this.seq + 1) this.take(e);
      if (page.length === 0 && this.seq < gapEnd) throw new Error(`the log has no events ${this.seq + 1}–${gapEnd}, yet ${gapEnd + 1} came`);
    }
  }

  /**
   * The first read of the whole log. Positions are gapless, so the next page's range is known
   * before this one arrives: the host reads one page while this process folds the one before.
   * The host may end a page early (it bounds replies by bytes): the rest of that range is read
   * before going on, so a range that stays short is the end of the log.
   */
  private async load(): Promise<void> {
    let next = this.seq + 1;
    const ask = () => {
      const from = next;
      next += PAGE;
      const page = this.read({ from, to: from + PAGE - 1, limit: PAGE });
      page.catch(() => {}); // awaited in turn below
      return { to: from + PAGE - 1, page };
    };
    const inFlight = [ask(), ask()];
    for (;;) {
      const { to, page } = inFlight.shift()!;
      let { events, more } = await page;
      this.accept(events);
      let last = events.at(-1)?.seq ?? to - PAGE;
      while (more && events.length > 0 && last < to) {
        ({ events, more } = await this.read({ after: last, to, limit: PAGE }));
        this.accept(events);
        last = events.at(-1)?.seq ?? last;
      }
      if (last < to) break; // the end of the log (what is appended later is passed on)
      inFlight.push(ask());
    }
    for (const { page } of inFlight) this.accept((await page).events);
    this.loaded = true;
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
