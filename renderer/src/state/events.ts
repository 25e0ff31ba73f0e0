import { createStore, type StoreApi } from 'zustand/vanilla';
import type { CorralApi, UiEvent } from '../../../main/api/ui/contract';
import { toClientError, type ClientError } from '../api/errors';
import { SessionIndex } from '../lib/session-index';
import { applyIncoming, newMemory, type Incoming, type Timeline } from './timeline';

/**
 * One session's events, kept live by watchEvents (ascending by seq, each seq once), and the
 * live text of events being written, kept by watchLiveText until their logged event arrives.
 */
export interface EventsState extends Timeline {
  sessionId: string;
  error: ClientError | null;
}

/** A session's event store (subscribe / getState) and a way to add events we already hold. */
export interface SessionEvents {
  store: StoreApi<EventsState>;
  /** Adds events (say, the one sendMessage returned); duplicates of known seqs are dropped. */
  add(events: readonly UiEvent[]): void;
  /** What the views derive from the events (turns, hands, usage), kept up to date before each state change. */
  index: SessionIndex;
}

interface Entry {
  handle: SessionEvents;
  refs: number;
  stop(): void;
  disposeTimer?: ReturnType<typeof setTimeout>;
}

/** Items arriving within this many ms are applied together (one new state, one render). */
const BATCH_MS = 16;
/** Events per page of the history (the contract's largest getEvents). */
const HISTORY_PAGE = 5000;
/** A batch this big means a backlog is loading: the next one waits BACKLOG_MS. */
const BACKLOG_BATCH = 200;
const BACKLOG_MS = 100;
/** A store nobody holds is kept this long, so switching back to a session is instant. */
const KEEP_MS = 30_000;

const registry = new Map<string, Entry>();

function open(api: CorralApi, sessionId: string): Entry {
  const store = createStore<EventsState>(() => ({ sessionId, events: [], live: [], error: null }));
  const memory = newMemory();
  const index = new SessionIndex();
  let buffer: Incoming[] = [];
  let timer: ReturnType<typeof setTimeout> | undefined;

  const flush = () => {
    clearTimeout(timer);
    timer = undefined;
    const batch = buffer;
    buffer = [];
    lastBatch = batch.length;
    const next = applyIncoming(store.getState(), batch, memory);
    if (!next) return;
    // Events only grow at the end unless one arrives out of order (never from watchEvents):
    // then the index starts over.
    if (next.events.length < index.count || (index.count > 0 && next.events[index.count - 1] !== store.getState().events[index.count - 1])) {
      Object.assign(index, new SessionIndex());
    }
    index.update(next.events);
    store.setState(next);
  };
  // While a long backlog pours in, batches are bigger and rarer (one render per 100 ms), so
  // the history loads fast; live events go out within a frame.
  let lastBatch = 0;
  const push = (item: Incoming) => {
    buffer.push(item);
    timer ??= setTimeout(flush, lastBatch > BACKLOG_BATCH ? BACKLOG_MS : BATCH_MS);
  };

  // The history comes in pages of HISTORY_PAGE events (one message each, one render each), then
  // watchEvents follows from the last one: a long session loads in seconds, not one message per
  // event. Events appended meanwhile are in the next page or in the stream; none twice (by seq).
  let stopped = false;
  let stopEvents = () => {};
  const fail = (err: unknown) => {
    if (!stopped) store.setState({ error: toClientError(err) });
  };
  void (async () => {
    let after = 0;
    for (;;) {
      const page = await api.getEvents({ sessionId, after, limit: HISTORY_PAGE });
      if (stopped) return;
      if (page.length) {
        buffer.push(...page.map((event) => ({ event })));
        flush();
        after = page[page.length - 1]!.seq;
      }
      if (page.length < HISTORY_PAGE) break;
    }
    stopEvents = api.watchEvents({ sessionId, after }, (event) => push({ event }), fail);
  })().catch(fail);
  // Live text is only a preview: if it cannot be had, the log still shows everything.
  const stopLive = api.watchLiveText(
    { sessionId },
    (live) => push({ live }),
    (error) => console.warn(`corral: no live text for ${sessionId}: ${error.message}`),
  );
  const add = (events: readonly UiEvent[]) => {
    buffer.push(...events.map((event) => ({ event })));
    flush();
  };
  return {
    handle: { store, add, index },
    refs: 0,
    stop: () => {
      stopped = true;
      clearTimeout(timer);
      stopEvents();
      stopLive();
    },
  };
}

/** Holds a session's event store (starting its stream if needed); call release when done. */
export function acquireSessionEvents(api: CorralApi, sessionId: string): { events: SessionEvents; release(): void } {
  let entry = registry.get(sessionId);
  if (!entry) {
    entry = open(api, sessionId);
    registry.set(sessionId, entry);
  }
  const held = entry;
  clearTimeout(held.disposeTimer);
  held.refs++;
  let released = false;
  return {
    events: held.handle,
    release() {
      if (released) return;
      released = true;
      if (--held.refs > 0) return;
      held.disposeTimer = setTimeout(() => {
        if (held.refs > 0 || registry.get(sessionId) !== held) return;
        registry.delete(sessionId);
        held.stop();
      }, KEEP_MS);
    },
  };
}

/** Drops a session's store now (its stream failed, say), so the next acquire starts afresh. */
export function forgetSessionEvents(sessionId: string): void {
  const entry = registry.get(sessionId);
  if (!entry) return;
  registry.delete(sessionId);
  clearTimeout(entry.disposeTimer);
  entry.stop();
}
