import { createStore, type StoreApi } from 'zustand/vanilla';
import type { CorralApi, UiEvent } from '../../../main/api/contract';
import { toClientError, type ClientError } from '../api/errors';

/** One session's events, kept live by watchEvents: ascending by seq, each seq once. */
export interface EventsState {
  sessionId: string;
  events: readonly UiEvent[];
  error: ClientError | null;
}

/** A session's event store (subscribe / getState) and a way to add events we already hold. */
export interface SessionEvents {
  store: StoreApi<EventsState>;
  /** Adds events (say, the one sendMessage returned); duplicates of known seqs are dropped. */
  add(events: readonly UiEvent[]): void;
}

interface Entry {
  handle: SessionEvents;
  refs: number;
  stop(): void;
  disposeTimer?: ReturnType<typeof setTimeout>;
}

/** Items arriving within this many ms are applied together (one new array, one render). */
const BATCH_MS = 16;
/** A store nobody holds is kept this long, so switching back to a session is instant. */
const KEEP_MS = 30_000;

const registry = new Map<string, Entry>();

function open(api: CorralApi, sessionId: string): Entry {
  const store = createStore<EventsState>(() => ({ sessionId, events: [], error: null }));
  const seen = new Set<number>();
  let buffer: UiEvent[] = [];
  let timer: ReturnType<typeof setTimeout> | undefined;

  const flush = () => {
    clearTimeout(timer);
    timer = undefined;
    const fresh: UiEvent[] = [];
    for (const e of buffer) {
      if (typeof e?.seq !== 'number' || seen.has(e.seq)) continue;
      seen.add(e.seq);
      fresh.push(e);
    }
    buffer = [];
    if (fresh.length === 0) return;
    fresh.sort((a, b) => a.seq - b.seq);
    const current = store.getState().events;
    const last = current.length ? current[current.length - 1]!.seq : -Infinity;
    const events = fresh[0]!.seq > last ? current.concat(fresh) : [...current, ...fresh].sort((a, b) => a.seq - b.seq);
    store.setState({ events });
  };

  const stop = api.watchEvents(
    { sessionId },
    (event) => {
      buffer.push(event);
      timer ??= setTimeout(flush, BATCH_MS);
    },
    (error) => store.setState({ error: toClientError(error) }),
  );
  const add = (events: readonly UiEvent[]) => {
    buffer.push(...events);
    flush();
  };
  return {
    handle: { store, add },
    refs: 0,
    stop: () => {
      clearTimeout(timer);
      stop();
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
