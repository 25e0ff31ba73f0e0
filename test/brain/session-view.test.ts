import { describe, expect, it } from 'vitest';
import { analyse } from '../../main/brain/analyse';
import { buildRequest } from '../../main/brain/context';
import { SessionView } from '../../main/brain/session-view';
import type { EventSlice, LoggedEvent } from '../../main/session/types';

const opts = { model: 'm', system: null, tools: [], maxTokens: 100, contextWindowTokens: 200_000 };

function events(n: number): LoggedEvent[] {
  return Array.from({ length: n }, (_, i) => {
    const seq = i + 1;
    const base = { id: `sevt_${seq}`, processed_at: '', seq };
    if (seq % 3 === 1) return { ...base, type: 'user.message', content: [{ type: 'text', text: `message ${seq}` }] };
    if (seq % 3 === 2) return { ...base, type: 'agent.message', content: [{ type: 'text', text: `answer ${seq}` }] };
    return { ...base, type: seq % 30 === 0 ? 'hand.attached' : 'session.status_idle', hand: 'x', handled_through: seq };
  });
}

/** A log the view reads through `read`, as the host would answer (slices by position). */
function logOf(all: LoggedEvent[], perPage = Infinity) {
  const reads: EventSlice[] = [];
  const read = async (slice: EventSlice) => {
    reads.push(slice);
    await new Promise((r) => setTimeout(r, 1));
    const lo = Math.max((slice.after ?? 0) + 1, slice.from ?? 1);
    const hi = Math.min(slice.to ?? Infinity, lo + (slice.limit ?? 1000) - 1);
    const inSlice = all.filter((e) => e.seq >= lo && e.seq <= hi);
    // `perPage` plays the host's byte bound: a page ends early and says the slice goes on.
    return { events: inSlice.slice(0, perPage), more: inSlice.length > perPage };
  };
  return { read, reads };
}

describe('SessionView', () => {
  it('reads a long log once, in pages, and folds every event once, in order', async () => {
    const all = events(2500);
    const { read, reads } = logOf(all);
    const view = new SessionView(read);
    await view.catchUp();
    expect(view.lastSeq).toBe(2500);
    expect(reads.map((r) => r.from)).toEqual([1, 1001, 2001, 3001]);
    expect(view.context.build(opts)).toEqual(buildRequest(all, opts));
    expect(view.analysis()).toEqual(analyse(all));
    expect(view.handsVersion).toBe(all.filter((e) => e.type === 'hand.attached').length);
    // Up to date: nothing more is read.
    await view.catchUp();
    expect(reads).toHaveLength(4);
  });

  it('reads on where the host cut a page short, up to the end of the log', async () => {
    const all = events(2450);
    const { read, reads } = logOf(all, 300);
    const view = new SessionView(read);
    await view.catchUp();
    expect(view.lastSeq).toBe(2450);
    expect(view.context.build(opts)).toEqual(buildRequest(all, opts));
    // Each range read on from where its page ended; the last one (2001–3000, cut at 2300 with
    // the log ending at 2450) too, though a short range would otherwise mean the end.
    expect(reads.filter((r) => r.after !== undefined).map((r) => r.after)).toEqual([300, 600, 900, 1300, 1600, 1900, 2300]);
  });

  it('events passed on while it reads (old, new, twice) are folded once, in order', async () => {
    const all = events(1200);
    const { read } = logOf(all.slice(0, 1100)); // the log as the first read sees it
    const view = new SessionView(read);
    const loading = view.catchUp();
    view.accept([all[1100]!, all[5]!, all[1100]!]); // the next after the read, an old one, the next again
    await loading;
    view.accept(all.slice(1100, 1200)); // the rest, including some seen already
    expect(view.lastSeq).toBe(1200);
    expect(view.context.build(opts)).toEqual(buildRequest(all, opts));
  });

  it('fills a gap before an event that came early, and refuses a log with a hole', async () => {
    const all = events(10);
    const more = events(14).slice(10);
    // The view at 10 hears of 13 first: it reads 11–12 when asked to catch up.
    const view2 = new SessionView(logOf(all).read);
    await view2.catchUp();
    const source = logOf([...all, ...more]);
    (view2 as unknown as { read: typeof source.read }).read = source.read;
    view2.accept([more[2]!]);
    expect(view2.lastSeq).toBe(10);
    await view2.catchUp();
    expect(view2.lastSeq).toBe(13);
    expect(source.reads).toEqual([{ after: 10, to: 12, limit: 1000 }]);
    // A hole the log itself has: an error, not a wrong view.
    const holey = new SessionView(logOf(all).read);
    await holey.catchUp();
    holey.accept([more[3]!]);
    await expect(holey.catchUp()).rejects.toThrow(/no events 11–13/);
  });
});
