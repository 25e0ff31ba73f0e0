import { Topic } from '../session/subscriptions';
import type { LoggedEvent } from '../session/types';
import type { LiveDelta } from './live-text';

/**
 * Live text of events brains are writing now (never logged), per session: passed on to
 * subscribers as it comes, and replayed to a subscriber that arrives mid-reply.
 */
export class LiveTextRelay {
  private readonly topic = new Topic<string, LiveDelta>();
  /** Text being written now, per session and event id. */
  private readonly writing = new Map<string, Map<string, { start: LiveDelta; text: string }>>();

  /** A brain's delta: kept for late subscribers and passed on. */
  publish(sessionId: string, d: LiveDelta): void {
    let writing = this.writing.get(sessionId);
    if (d.type === 'event_start') {
      if (!writing) this.writing.set(sessionId, (writing = new Map()));
      writing.set(d.event.id, { start: d, text: '' });
    } else {
      const w = writing?.get(d.event_id);
      if (w) w.text += d.delta.content.text;
    }
    this.topic.publish(sessionId, d);
  }

  /** Text being written ends as its event is logged, or with its request. */
  logged(sessionId: string, event: LoggedEvent): void {
    const writing = this.writing.get(sessionId);
    if (!writing) return;
    writing.delete(event.id);
    if (writing.size === 0 || event.type === 'span.model_request_end') this.writing.delete(sessionId);
  }

  /** The session's brain is gone: what it was writing will not be finished. */
  clear(sessionId: string): void {
    this.writing.delete(sessionId);
  }

  subscribe(sessionId: string, listener: (d: LiveDelta) => void): () => void {
    for (const [id, w] of this.writing.get(sessionId) ?? []) {
      listener(w.start);
      if (w.text) listener({ type: 'event_delta', event_id: id, delta: { type: 'content_delta', content: { type: 'text', text: w.text }, index: 0 } });
    }
    return this.topic.subscribe(sessionId, listener);
  }
}
