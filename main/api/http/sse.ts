import type { Context } from 'hono';
import { streamSSE } from 'hono/streaming';
import type { LiveDelta } from '../../brain/live-text';
import type { SessionLog } from '../../session/store';
import { SessionNotFoundError, type LoggedEvent } from '../../session/types';

const PAGE = 500;

/**
 * Streams a session's events after position `after` as SSE frames (`event: <type>`, `id:
 * <event id>`, `data: <json>`), then each new one as it is committed. Events are read from the
 * log, not buffered in memory, so a slow client slows only its own stream; an idle stream
 * sends `ping` frames every `heartbeatMs`.
 */
/** Live text to interleave with the log's events (`event_deltas`): which kinds, and its source. */
export interface DeltaFeed {
  types: ReadonlySet<string>;
  subscribe(listener: (d: LiveDelta) => void): () => void;
}

export function streamSessionEvents(c: Context, log: SessionLog, sessionId: string, after: number, heartbeatMs: number, deltas?: DeltaFeed): Response {
  c.header('x-accel-buffering', 'no');
  return streamSSE(
    c,
    async (stream) => {
      let last = after;
      let pending = false;
      let wake: (() => void) | undefined;
      let deleted: LoggedEvent | undefined;
      const unsubscribe = log.subscribe(sessionId, (e) => {
        if (e.type === 'session.deleted') deleted = e;
        pending = true;
        wake?.();
      });
      stream.onAbort(() => wake?.());
      // Live text waits in a queue and is written before the log's events that follow it.
      const queued: LiveDelta[] = [];
      const wanted = new Set<string>();
      const stopDeltas = deltas?.subscribe((d) => {
        if (d.type === 'event_start') {
          if (!deltas.types.has(d.event.type)) return;
          wanted.add(d.event.id);
        } else if (!wanted.has(d.event_id)) return;
        queued.push(d);
        pending = true;
        wake?.();
      });
      const write = (e: LoggedEvent) => stream.writeSSE({ event: e.type, id: e.id, data: JSON.stringify(e) });
      try {
        while (!stream.aborted) {
          pending = false;
          while (queued.length > 0) {
            const d = queued.shift()!;
            await stream.writeSSE({ event: d.type, data: JSON.stringify(d) });
          }
          let page: LoggedEvent[];
          try {
            page = log.getEvents(sessionId, { after: last, limit: PAGE });
          } catch (err) {
            if (!(err instanceof SessionNotFoundError)) throw err;
            // Deleted (its events may be purged already): say so and end the stream.
            if (deleted) await write(deleted);
            break;
          }
          for (const e of page) {
            await write(e);
            last = e.seq;
            wanted.delete(e.id);
          }
          if (page.length === PAGE || pending) continue;
          const timedOut = await new Promise<boolean>((resolve) => {
            const timer = setTimeout(() => resolve(true), heartbeatMs);
            wake = () => {
              clearTimeout(timer);
              resolve(false);
            };
          });
          wake = undefined;
          if (timedOut && !stream.aborted) await stream.writeSSE({ event: 'ping', data: '{"type":"ping"}' });
        }
      } finally {
        unsubscribe();
        stopDeltas?.();
      }
    },
    async (err, stream) => {
      console.error('corral: event stream failed:', err);
      await stream.writeSSE({
        event: 'error',
        data: JSON.stringify({ type: 'error', error: { type: 'api_error', message: 'the event stream failed (see the server log)' } }),
      });
    },
  );
}
