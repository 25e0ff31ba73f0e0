/** What a caller hands to `emitEvent`: the event's own fields, without id, processed_at or seq. */
export interface EventInput {
  type: string;
  [field: string]: unknown;
}

/**
 * An event as committed to the log: the Managed Agents event shape (`id`, `type`,
 * `processed_at`, type-specific fields) plus `seq`, its gapless position in the session.
 */
export interface LoggedEvent {
  id: string;
  type: string;
  processed_at: string;
  seq: number;
  [field: string]: unknown;
}

/** Session status as the Managed Agents API names it; derived from the last status event. */
export type SessionStatus = 'rescheduling' | 'running' | 'idle' | 'terminated';

/** Token usage summed over the session's `span.model_request_end` events. */
export interface SessionUsageTotals {
  input_tokens: number;
  output_tokens: number;
  cache_read_input_tokens: number;
  cache_creation_input_tokens: number;
}

/** The log's record of one session. `record` is the API layer's data, stored as given. */
export interface SessionRow {
  id: string;
  created_at: string;
  updated_at: string;
  archived_at: string | null;
  status: SessionStatus;
  /** The session this one was forked from, and the last position it shares with it. */
  parent_id: string | null;
  fork_seq: number | null;
  /** Position of the newest event (0 for an empty log; a fresh fork starts at `fork_seq`). */
  last_seq: number;
  agent_id: string | null;
  agent_version: number | null;
  environment_id: string | null;
  usage: SessionUsageTotals;
  record: Record<string, unknown>;
}

/**
 * A positional slice of a session's log. Bounds combine; `limit` keeps the events nearest the
 * lower bound, except when there is no lower bound and either `before` is given or the order
 * is newest-first: then it keeps those nearest the end ("the K events before N").
 */
export interface EventSlice {
  /** Only events with seq > after (resume where a reader stopped). */
  after?: number;
  /** Only events with seq < before (look back from a moment). */
  before?: number;
  /** Only events with seq >= from. */
  from?: number;
  /** Only events with seq <= to. */
  to?: number;
  /** Only these event types. */
  types?: readonly string[];
  /** Only events processed in this time window (ISO 8601 strings, compared as stored). */
  processedAfter?: string;
  processedFrom?: string;
  processedBefore?: string;
  processedTo?: string;
  /** Result order; default oldest-first. */
  order?: 'asc' | 'desc';
  /** At most this many events; default 1000. */
  limit?: number;
  /**
   * Stop once the slice holds this many bytes of event JSON (UTF-8, as stored): the event that
   * reaches the mark is the last one, so a slice holds less than `maxBytes` plus one event
   * (at most MAX_EVENT_BYTES). Readers that send what they read use it to size pages by bytes.
   */
  maxBytes?: number;
}

/** Where an event sits in the log and how big it is, read without reading the event. */
export interface EventHead {
  seq: number;
  id: string;
  type: string;
  /** Bytes of its stored JSON (UTF-8, without `seq`). */
  bytes: number;
}

/**
 * An event as the JSON a reader is sent, read without parsing it: `json` is the UTF-8 of exactly
 * `JSON.stringify` of the LoggedEvent at `seq`, in parts never joined (the stored body up to its
 * closing brace, then `,"seq":N}`). Bytes, not a string: making a 4 MiB string costs several
 * times reading the bytes (V8 copies them into fresh memory), and a socket takes bytes anyway.
 */
export interface EventJson {
  seq: number;
  id: string;
  type: string;
  json: readonly Buffer[];
  /** Bytes of `json`, all parts. */
  bytes: number;
}

/** Thrown for bad input to the log: the caller's fault, nothing was written. */
export class LogInputError extends Error {
  override readonly name = 'LogInputError';
}

/** Thrown when a session id names no session (or a deleted one). */
export class SessionNotFoundError extends Error {
  override readonly name = 'SessionNotFoundError';
  constructor(readonly sessionId: string) {
    super(`no session with id '${sessionId}'`);
  }
}
