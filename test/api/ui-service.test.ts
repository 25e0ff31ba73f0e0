import path from 'node:path';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { createUiService } from '../../main/api/ui/service';
import { openDatabase } from '../../main/session/db';
import { SessionLog } from '../../main/session/store';
import type { LiveTextItem } from '../../main/api/ui/contract';
import type { LoggedEvent } from '../../main/session/types';
import { tmpDir } from '../helpers/tmp';

/** Bytes of events per page of a replay in these tests. */
const PAGE_BYTES = 64 * 1024;

/** A real log holding one session of `count` user messages, all of one size. */
function sessionWith(count: number) {
  const log = new SessionLog(openDatabase({ file: path.join(tmpDir(), 'corral.db') }));
  const { session } = log.createSession({ record: {} });
  log.emitEvents(
    session.id,
    Array.from({ length: count }, (_, i) => ({ type: 'user.message', content: [{ type: 'text', text: `m${String(i + 1).padStart(200, '0')}` }] })),
  );
  const ui = createUiService({ log, pageBytes: PAGE_BYTES });
  return { log, ui, sessionId: session.id };
}

/** Events in one page: a page ends with the event that reaches PAGE_BYTES. */
const BACKLOG_PAGE = (() => {
  const { log, sessionId } = sessionWith(1);
  const { seq: _seq, ...stored } = log.getEvents(sessionId)[0]!;
  return Math.ceil(PAGE_BYTES / Buffer.byteLength(JSON.stringify(stored)));
})();

async function until(cond: () => boolean, what: string) {
  for (let i = 0; i < 2000 && !cond(); i++) await new Promise((r) => setTimeout(r, 5));
  if (!cond()) throw new Error(`timed out waiting for ${what}`);
}

describe('watchEvents over a long backlog', () => {
  it('sends it a page at a time, yielding between pages, then follows live appends without gap or double', async () => {
    const total = BACKLOG_PAGE * 4 + 17;
    const { log, ui, sessionId } = sessionWith(total);
    const got: LoggedEvent[] = [];
    const stop = ui.watch('watchEvents', { sessionId }, (e) => got.push(e));
    // Nothing went out before watch returned: each page, the first too, goes out in its own turn
    // of the event loop (a client's watches come in one burst), and the host's work runs between.
    expect(got.length).toBe(0);
    await nextTurn();
    expect(got.length).toBe(BACKLOG_PAGE);
    await nextTurn();
    expect(got.length).toBeLessThan(total);
    // Appends made during the replay arrive after the backlog, once each.
    log.emitEvent(sessionId, { type: 'user.message', content: [{ type: 'text', text: 'during' }] });
    await until(() => got.length === total + 1, 'the backlog and the append');
    log.emitEvent(sessionId, { type: 'user.message', content: [{ type: 'text', text: 'after' }] });
    // Caught up, a live append goes out once the appending code is done, not inside the append.
    expect(got.length).toBe(total + 1);
    await Promise.resolve();
    expect(got.map((e) => e.seq)).toEqual(Array.from({ length: total + 2 }, (_, i) => i + 1));
    stop();
    log.emitEvent(sessionId, { type: 'user.message', content: [{ type: 'text', text: 'unseen' }] });
    expect(got.length).toBe(total + 2);
  });

  it('waits while the transport is full, and stops mid-replay when unwatched', async () => {
    const { ui, sessionId } = sessionWith(BACKLOG_PAGE * 3);
    let release!: () => void;
    let drainCalls = 0;
    const got: LoggedEvent[] = [];
    const stop = ui.watch('watchEvents', { sessionId, after: 10 }, (e) => got.push(e), {
      drained: () => (drainCalls++, new Promise<void>((r) => (release = r))),
    });
    // The first page waits for room too.
    for (let i = 0; i < 20; i++) await nextTurn();
    expect(drainCalls).toBe(1);
    expect(got).toEqual([]);
    release();
    await until(() => drainCalls === 2, 'the first page');
    expect(got[0]!.seq).toBe(11);
    expect(got.length).toBe(BACKLOG_PAGE);
    release();
    await until(() => drainCalls === 3, 'the second page');
    expect(got.length).toBe(2 * BACKLOG_PAGE);
    stop();
    release();
    for (let i = 0; i < 20; i++) await nextTurn();
    expect(got.length).toBe(2 * BACKLOG_PAGE);
  });

  it('ends quietly when the session is deleted mid-replay', async () => {
    const { log, ui, sessionId } = sessionWith(BACKLOG_PAGE * 2 + 1);
    const got: LoggedEvent[] = [];
    ui.watch('watchEvents', { sessionId }, (e) => got.push(e));
    await nextTurn();
    log.deleteSession(sessionId);
    for (let i = 0; i < 20; i++) await nextTurn();
    expect(got.length).toBe(BACKLOG_PAGE);
  });
});

describe('watchEvents caught up', () => {
  it('pushes appends made in one go after the code that made them, in order; a transport that fills meanwhile gets the rest from the log', async () => {
    const { log, ui, sessionId } = sessionWith(3);
    const got: number[] = [];
    let congested = false;
    let seenByAppender = -1;
    let fillsAfterEach = false;
    ui.watch('watchEvents', { sessionId }, (e) => (got.push(e.seq), (congested ||= fillsAfterEach)), { drained: () => Promise.resolve(), congested: () => congested });
    await until(() => got.length === 3, 'the backlog');
    // Three appends in one go (a reply's call and its end, then a tool's result): none goes out inside them.
    log.emitEventGroups(sessionId, [{ events: [{ type: 'user.message', content: [{ type: 'text', text: 'a' }] }] }, { events: [{ type: 'user.message', content: [{ type: 'text', text: 'b' }] }] }]);
    log.emitEvent(sessionId, { type: 'user.message', content: [{ type: 'text', text: 'c' }] });
    seenByAppender = got.length;
    await Promise.resolve();
    expect(seenByAppender).toBe(3);
    expect(got).toEqual([1, 2, 3, 4, 5, 6]);
    // The transport fills after the first of a burst: the rest waits in the log, then comes once each.
    log.emitEvent(sessionId, { type: 'user.message', content: [{ type: 'text', text: 'd' }] });
    log.emitEvent(sessionId, { type: 'user.message', content: [{ type: 'text', text: 'e' }] });
    fillsAfterEach = true;
    await Promise.resolve();
    expect(got).toEqual([1, 2, 3, 4, 5, 6, 7]);
    fillsAfterEach = false;
    congested = false;
    await until(() => got.length === 8, 'the rest from the log');
    log.emitEvent(sessionId, { type: 'user.message', content: [{ type: 'text', text: 'f' }] });
    await until(() => got.length === 9, 'a live append again');
    expect(got).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
  });
});

describe('watchLiveText for a client that is behind', () => {
  it("drops an event's live text from the first item dropped to its end, and keeps other events whole", () => {
    const log = new SessionLog(openDatabase({ file: path.join(tmpDir(), 'corral.db') }));
    const { session } = log.createSession({ record: {} });
    let feed!: (item: LiveTextItem) => void;
    const ui = createUiService({ log, subscribeLiveText: (_id, listener) => ((feed = listener), () => {}) });
    let congested = false;
    const got: string[] = [];
    ui.watch('watchLiveText', { sessionId: session.id }, (item) => got.push(item.type === 'event_start' ? `start ${item.event.id}` : `${item.event_id} ${(item.delta.content as { text: string }).text}`), {
      congested: () => congested,
    });
    const start = (id: string): LiveTextItem => ({ type: 'event_start', event: { id, type: 'agent.message' } });
    const delta = (id: string, text: string): LiveTextItem => ({ type: 'event_delta', event_id: id, delta: { type: 'content_delta', content: { type: 'text', text }, index: 0 } });
    feed(start('a'));
    feed(delta('a', '1'));
    congested = true;
    feed(delta('a', '2'));
    congested = false;
    feed(delta('a', '3')); // after a gap: dropped too
    feed(start('b'));
    feed(delta('b', '1'));
    expect(got).toEqual(['start a', 'a 1', 'start b', 'b 1']);
  });
});
