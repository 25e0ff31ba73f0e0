import type { IncomingMessage } from 'node:http';
import type { Context } from 'hono';
import { streamSSE, type SSEStreamingApi } from 'hono/streaming';
import type { LiveDelta } from '../../brain/live-text';
import type { SessionLog } from '../../session/store';
import { SessionNotFoundError, type LoggedEvent } from '../../session/types';
import { READER_PAGE_BYTES, STALL_MS } from '../reader-limits';
import { readerTurns } from '../reader-turns';
import type { HeldBytes } from './held-bytes';
import type { SharedEventJson } from '../shared-event-json';
import { SseFrames } from './sse-frames';

/** Most bytes written at once: a slow client has at most about this much queued for it. */
const PIECE_BYTES = 32 * 1024;
/** Events per page at most (pages are sized by bytes; this bounds a page of tiny events). */
const PAGE_EVENTS = 1000;
/** A reader waiting on its client this long lets go of what it read (see HeldBytes). */
const PARK_MS = 1000;
/** Live text queued for a client that is behind, at most (characters); beyond it is dropped. */
const MAX_QUEUED_DELTA_CHARS = 256 * 1024;

/** Live text to interleave with the log's events (`event_deltas`): which kinds, and its source. */
export interface DeltaFeed {
  types: ReadonlySet<string>;
  subscribe(listener: (d: LiveDelta) => void): () => void;
}

/** What one SSE stream of a session's events needs. */
export interface EventStreamOptions {
  log: SessionLog;
  /** Where pages of events are read, large events shared between streams. */
  events: SharedEventJson;
  sessionId: string;
  /** The position after which the stream starts. */
  after: number;
  /** How often an idle stream sends a `ping`. */
  heartbeatMs: number;
  deltas?: DeltaFeed;
  /** The server's budget for events kept while clients are slow. */
  held: HeldBytes;
  /** See SlowReaderOptions. */
  stallMs?: number;
}

/**
 * Streams a session's events after `after` as SSE frames (`event: <type>`, `id: <event id>`,
 * `data: <json>`), then each new one as it is committed. The log is the buffer: events are read
 * a page (READER_PAGE_BYTES) at a time, a large one shared with the server's other streams
 * (SharedEventJson), and written a piece (PIECE_BYTES) at a time, each write waiting until the
 * client has taken the one before; so a slow client costs one piece of memory, plus what it
 * read while the server's HeldBytes budget allows. A client that takes
 * nothing for `stallMs` is disconnected (it resumes with Last-Event-ID, losing nothing). An
 * idle stream sends `ping` frames every `heartbeatMs`.
 */
export function streamSessionEvents(c: Context, opts: EventStreamOptions): Response {
  const { log, events, sessionId, deltas, held } = opts;
  const stallMs = opts.stallMs ?? STALL_MS;
  c.header('x-accel-buffering', 'no');
  return streamSSE(
    c,
    async (stream) => {
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
      const live = new LiveTextQueue(deltas?.types);
      const stopDeltas = deltas?.subscribe((d) => {
        if (!live.add(d)) return;
        pending = true;
        wake?.();
      });
      const frames = new SseFrames(
        (after) => events.page(sessionId, { after, limit: PAGE_EVENTS, maxBytes: READER_PAGE_BYTES }),
        opts.after,
      );

      /** Writes `data`; false when the stream is over (the client left, or was too slow). */
      const send = async (data: string | Uint8Array): Promise<boolean> => {
        const taken = stream.write(data);
        if (await settlesSoon(taken)) return !stream.aborted;
        // The client is behind: keep what was read only within the server's budget.
        let giveBack = held.take(frames.held());
        if (!giveBack) frames.drop();
        const park = setTimeout(() => {
          frames.drop();
          giveBack?.();
          giveBack = undefined;
        }, PARK_MS);
        const inTime = await settlesWithin(taken, stallMs);
        clearTimeout(park);
        giveBack?.();
        if (!inTime) {
          disconnect(c, stream, `session ${sessionId}: the client took nothing for ${stallMs} ms; disconnected after seq ${frames.position} (it can resume with Last-Event-ID)`);
          return false;
        }
        return !stream.aborted;
      };

      try {
        while (!stream.aborted) {
          pending = false;
          // Live text goes between frames, never inside one being sent in pieces.
          const queued = frames.atFrameBoundary ? live.take() : undefined;
          if (queued && !(await send(queued))) break;
          let piece;
          try {
            // Reading the log takes turns with the host's other readers; sending what is held does not.
            piece = frames.readsNext ? await readerTurns.run(() => frames.next(PIECE_BYTES)) : frames.next(PIECE_BYTES);
          } catch (err) {
            if (!(err instanceof SessionNotFoundError)) throw err;
            // Deleted (its events may be purged already): say so and end the stream.
            if (deleted && frames.atFrameBoundary) await send(`event: ${deleted.type}\ndata: ${JSON.stringify(deleted)}\nid: ${deleted.id}\n\n`);
            break;
          }
          if (piece) {
            if (!(await send(piece.bytes))) break;
            for (const e of piece.completed) live.finished(e.id);
            continue;
          }
          if (pending) continue;
          const timedOut = await new Promise<boolean>((resolve) => {
            const timer = setTimeout(() => resolve(true), opts.heartbeatMs);
            wake = () => {
              clearTimeout(timer);
              resolve(false);
            };
          });
          wake = undefined;
          if (timedOut && !stream.aborted && !(await send('event: ping\ndata: {"type":"ping"}\n\n'))) break;
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

/**
 * Live text (`event_start`, `event_delta`) waiting to be written. Only events of the wanted
 * types are taken, and only until their logged event has been written. For a client that is
 * behind, the queue is bounded: past MAX_QUEUED_DELTA_CHARS the queued text is dropped and so
 * is the rest of those events' live text (the client never sees a gap inside one event's text;
 * the logged event, which follows, carries all of it).
 */
class LiveTextQueue {
  private frames: { eventId: string; text: string }[] = [];
  private chars = 0;
  /** Events whose live text is still written (their start was taken, their event not written). */
  private readonly open = new Set<string>();

  constructor(private readonly types: ReadonlySet<string> | undefined) {}

  /** Queues `d` if it is wanted; true if it was. */
  add(d: LiveDelta): boolean {
    if (d.type === 'event_start') {
      if (!this.types?.has(d.event.type)) return false;
      this.open.add(d.event.id);
    } else if (!this.open.has(d.event_id)) return false;
    const text = `event: ${d.type}\ndata: ${JSON.stringify(d)}\n\n`;
    this.frames.push({ eventId: d.type === 'event_start' ? d.event.id : d.event_id, text });
    this.chars += text.length;
    if (this.chars > MAX_QUEUED_DELTA_CHARS) {
      this.frames = [];
      this.chars = 0;
      this.open.clear();
    }
    return true;
  }

  /** Everything queued, as one text (undefined when nothing is). */
  take(): string | undefined {
    if (this.frames.length === 0) return undefined;
    const text = this.frames.map((f) => f.text).join('');
    this.frames = [];
    this.chars = 0;
    return text;
  }

  /** The logged event is written: its live text is over, including what is still queued. */
  finished(eventId: string): void {
    if (!this.open.delete(eventId)) return;
    const kept = this.frames.filter((f) => f.eventId !== eventId);
    if (kept.length === this.frames.length) return;
    this.frames = kept;
    this.chars = kept.reduce((n, f) => n + f.text.length, 0);
  }
}

/** True if `p` settles before the event loop's next turn (the client's buffer had room). */
async function settlesSoon(p: Promise<unknown>): Promise<boolean> {
  let settled = false;
  void p.then(() => (settled = true));
  await new Promise((r) => setImmediate(r));
  return settled;
}

/** True if `p` settles within `ms`. */
function settlesWithin(p: Promise<unknown>, ms: number): Promise<boolean> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    void p.then(() => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}

/**
 * Ends a stream whose client stopped reading. Nothing more can reach such a client, so the
 * reason goes to the server's log; closing the socket frees what was queued for it.
 */
function disconnect(c: Context, stream: SSEStreamingApi, reason: string): void {
  console.warn(`corral: slow SSE reader: ${reason}`);
  const socket = (c.env as { incoming?: IncomingMessage } | undefined)?.incoming?.socket;
  socket?.destroy();
  stream.abort();
}
