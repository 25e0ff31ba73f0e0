/**
 * Live text (event_start / event_delta) redacted across deltas: a secret split over two deltas
 * is still caught, because each event's text is held back by (longest secret − 1) characters
 * until more arrives or its event is appended.
 */
import type { SessionLog } from '../session/store';
import type { EventInput } from '../session/types';
import type { Redactor, StreamRedactor } from './redact';

/** The live-text shapes (main/brain/live-text.ts), without importing the brain. */
export interface LiveDeltaLike {
  type: 'event_start' | 'event_delta';
  event?: { id: string };
  event_id?: string;
  delta?: { content: { text: string } };
}

type LiveStreams = Map<string, { stream: StreamRedactor; last?: LiveDeltaLike }>;

const withText = <D extends LiveDeltaLike>(d: D, text: string): D => ({ ...d, delta: { ...d.delta!, content: { ...d.delta!.content, text } } });

/** Per-session, per-event stream state of the live text being redacted. */
export class LiveRedaction {
  private readonly live = new Map<string, LiveStreams>();
  private readonly unsubscribe: () => void;
  private liveTailSink?: (sessionId: string, delta: LiveDeltaLike) => void;

  constructor(
    log: SessionLog,
    private readonly redactor: () => Redactor,
  ) {
    // Live text ends as its event is logged (or its request ends): drop its stream state.
    this.unsubscribe = log.subscribeAll(({ sessionId, event }) => {
      const streams = this.live.get(sessionId);
      if (!streams) return;
      streams.delete(event.id);
      if (streams.size === 0 || event.type === 'span.model_request_end') this.live.delete(sessionId);
    });
  }

  close(): void {
    this.unsubscribe();
    this.live.clear();
  }

  /** The delta with its text redacted; null for a delta with nothing to show yet. */
  redactDelta<D extends LiveDeltaLike>(sessionId: string, delta: D): D | null {
    const redactor = this.redactor();
    if (!redactor.active) return delta;
    let streams = this.live.get(sessionId);
    if (!streams) this.live.set(sessionId, (streams = new Map()));
    if (delta.type === 'event_start') {
      streams.set(delta.event!.id, { stream: redactor.stream() });
      return delta;
    }
    const id = delta.event_id!;
    let live = streams.get(id);
    if (!live) streams.set(id, (live = { stream: redactor.stream() }));
    live.last = delta;
    const text = live.stream.push(delta.delta!.content.text);
    return text ? withText(delta, text) : null;
  }

  setLiveTailSink(sink: (sessionId: string, delta: LiveDeltaLike) => void): void {
    this.liveTailSink = sink;
  }

  /** Pushes what was held back of each appended event's live text as a last delta, before the event. */
  flushLive(sessionId: string, events: readonly EventInput[]): void {
    const streams = this.live.get(sessionId);
    if (!streams) return;
    for (const e of events) {
      const id = typeof e.id === 'string' ? e.id : undefined;
      const live = id ? streams.get(id) : undefined;
      if (!live) continue;
      streams.delete(id!);
      const tail = live.stream.end();
      if (tail && live.last) this.liveTailSink?.(sessionId, withText(live.last, tail));
    }
  }
}
