import type { LiveTextItem, UiEvent } from '../../../main/api/ui/contract';

/**
 * The pure part of a session's store: logged events (ascending by seq, each seq once) and the
 * live text of events being written, which is only a preview: each entry goes the moment its
 * logged event arrives, and the view can always be rebuilt from the log alone.
 */

/** An event the model is writing now, with the text so far. */
export interface LiveText {
  id: string;
  type: 'agent.message' | 'agent.thinking';
  text: string;
  /** When its start reached us (ISO), for the row's time column. */
  startedAt: string;
}

export interface Timeline {
  events: readonly UiEvent[];
  live: readonly LiveText[];
}

/** Something that arrived on one of the session's two streams, in arrival order. */
export type Incoming = { event: UiEvent } | { live: LiveTextItem };

/** What a store remembers between batches. */
export interface TimelineMemory {
  seqs: Set<number>;
  /** Ids of logged events of the kinds live text previews: a late start for them is ignored. */
  loggedIds: Set<string>;
}

const PREVIEWED = new Set(['agent.message', 'agent.thinking']);
/** After these, any live text not logged yet never will be (a response cut short, say). */
const ENDS_LIVE_TEXT = new Set(['span.model_request_end', 'session.status_idle', 'session.status_terminated']);

export const newMemory = (): TimelineMemory => ({ seqs: new Set(), loggedIds: new Set() });

/**
 * Applies a batch in arrival order; returns the new timeline, or null when nothing changed.
 * A logged event and the removal of its live text land in the same state, so the row swaps
 * without a frame in between.
 */
export function applyIncoming(current: Timeline, batch: readonly Incoming[], memory: TimelineMemory, now = new Date().toISOString()): Timeline | null {
  const fresh: UiEvent[] = [];
  let live = current.live;
  for (const item of batch) {
    if ('event' in item) {
      const e = item.event;
      if (typeof e?.seq !== 'number' || memory.seqs.has(e.seq)) continue;
      memory.seqs.add(e.seq);
      fresh.push(e);
      if (PREVIEWED.has(e.type)) memory.loggedIds.add(e.id);
      if (ENDS_LIVE_TEXT.has(e.type)) live = live.length ? [] : live;
      else if (live.some((l) => l.id === e.id)) live = live.filter((l) => l.id !== e.id);
    } else {
      live = applyLive(live, item.live, memory, now);
    }
  }
  const events = merge(current.events, fresh);
  if (events === current.events && live === current.live) return null;
  return { events, live };
}

function applyLive(live: readonly LiveText[], item: LiveTextItem, memory: TimelineMemory, now: string): readonly LiveText[] {
  if (item?.type === 'event_start') {
    const { id, type } = item.event ?? {};
    if (typeof id !== 'string' || !PREVIEWED.has(type) || memory.loggedIds.has(id)) return live;
    // A start for text already shown is the host replaying it from the beginning (after a
    // reconnect): what follows is the whole text so far, so start the row over.
    const known = live.find((l) => l.id === id);
    if (known) return live.map((l) => (l.id === id ? { ...l, text: '' } : l));
    return [...live, { id, type, text: '', startedAt: now }];
  }
  if (item?.type === 'event_delta') {
    const text = item.delta?.content?.text;
    const i = live.findIndex((l) => l.id === item.event_id);
    if (i < 0 || typeof text !== 'string' || text === '') return live;
    return live.map((l, j) => (j === i ? { ...l, text: l.text + text } : l));
  }
  return live;
}

function merge(current: readonly UiEvent[], fresh: UiEvent[]): readonly UiEvent[] {
  if (fresh.length === 0) return current;
  fresh.sort((a, b) => a.seq - b.seq);
  const last = current.length ? current[current.length - 1]!.seq : -Infinity;
  return fresh[0]!.seq > last ? current.concat(fresh) : [...current, ...fresh].sort((a, b) => a.seq - b.seq);
}
