/**
 * Bounds shared by every reader of a session's events over the network (the SSE stream and the
 * UI's WebSocket): how much is read from the log at a time, and how long a client may leave
 * what was sent to it unread before it is disconnected.
 */

/**
 * Bytes of events read (and sent) at a time: a page ends with the event that reaches this mark,
 * so it holds less than this plus one event (an event is at most 4 MiB, MAX_EVENT_BYTES).
 */
export const READER_PAGE_BYTES = 1024 * 1024;

/** Default of `SlowReaderOptions.stallMs`. */
export const STALL_MS = 30_000;

/** How the server treats a client that does not read what it is sent. */
export interface SlowReaderOptions {
  /**
   * How long a client's connection may hold unsent data without taking any of it before the
   * server closes it (default 30 s). The client loses nothing: it resumes from the last event
   * it received (SSE: Last-Event-ID; the UI socket: watchEvents `after`).
   */
  stallMs?: number;
}
