import type { Database, Statement } from 'better-sqlite3';
import type { Segment } from './segments';
import { LogInputError, type EventHead, type EventJson, type EventSlice, type LoggedEvent } from './types';

const MAX_LIMIT = 100_000;

interface TimeBound {
  op: '>' | '>=' | '<' | '<=';
  value: string;
}

interface Row {
  seq: number;
  body: string;
}

interface FullRow extends Row {
  id: string;
  type: string;
  /** The body's size in UTF-8, from SQLite (counting a 4 MiB string in JS is a pass over it). */
  bytes: number;
}

/** A row whose body is read as its bytes. */
interface ByteRow extends Omit<FullRow, 'body'> {
  body: Buffer;
}

/** Rows of a slice, and whether it ended early (at `limit` or `maxBytes`) with more to read. */
interface Scan<R> {
  rows: R[];
  more: boolean;
}

/** What a scan selects: whole rows, rows with their bodies as bytes, or heads (sizes without bodies). */
type Columns = 'rows' | 'bytes' | 'heads';
const SELECT: Record<Columns, string> = {
  rows: 'seq, id, type, body, octet_length(body) AS bytes',
  bytes: 'seq, id, type, CAST(body AS BLOB) AS body, octet_length(body) AS bytes',
  heads: 'seq, id, type, octet_length(body) AS bytes',
};

/** Turns a stored row into the event a reader sees (seq is the row's position). */
export function rowToEvent(row: Row): LoggedEvent {
  const event = JSON.parse(row.body) as LoggedEvent;
  event.seq = row.seq;
  return event;
}

/**
 * The JSON of a stored row as `JSON.stringify(rowToEvent(row))` would give it, without parsing:
 * the body was written by JSON.stringify without `seq` (the log assigns it), and parsing and
 * stringifying such text again yields the same text, so `seq` is appended as the last key.
 */
export function rowToJson(row: ByteRow): EventJson {
  const tail = Buffer.from(`,"seq":${row.seq}}`);
  return { seq: row.seq, id: row.id, type: row.type, json: [row.body.subarray(0, row.body.length - 1), tail], bytes: row.bytes - 1 + tail.length };
}

function checkPosition(name: string, value: number | undefined): void {
  if (value !== undefined && (!Number.isInteger(value) || value < 0)) {
    throw new LogInputError(`slice.${name} must be a whole number >= 0, got ${String(value)}`);
  }
}

/** Reads positional slices across a session's segments; statements are prepared once per shape. */
export class EventReader {
  private readonly cache = new Map<string, Statement>();

  constructor(private readonly db: Database) {}

  private statement(columns: Columns, order: 'asc' | 'desc', typed: boolean, times: readonly TimeBound[]): Statement {
    const key = `${columns}|${order}|${typed}|${times.map((t) => t.op).join(',')}`;
    let stmt = this.cache.get(key);
    if (!stmt) {
      const sql =
        `SELECT ${SELECT[columns]} FROM events WHERE session_id = ? AND seq BETWEEN ? AND ?` +
        (typed ? ` AND type IN (SELECT value FROM json_each(?))` : '') +
        times.map((t) => ` AND processed_at ${t.op} ?`).join('') +
        ` ORDER BY seq ${order === 'asc' ? 'ASC' : 'DESC'} LIMIT ?`;
      stmt = this.db.prepare(sql);
      this.cache.set(key, stmt);
    }
    return stmt;
  }

  read(segments: readonly Segment[], slice: EventSlice): LoggedEvent[] {
    checkLimit(slice.limit ?? 1000, slice.limit);
    return this.scan('rows', segments, slice).rows.map(rowToEvent);
  }

  /** Like `read`, as the JSON text of each event (not parsed). */
  readJson(segments: readonly Segment[], slice: EventSlice): EventJson[] {
    checkLimit(slice.limit ?? 1000, slice.limit);
    return this.scan('bytes', segments, slice).rows.map(rowToJson);
  }

  /** Like `read`, the heads of the events only: their bodies are not loaded into memory. */
  readHeads(segments: readonly Segment[], slice: EventSlice): EventHead[] {
    checkLimit(slice.limit ?? 1000, slice.limit);
    return this.scan('heads', segments, slice).rows;
  }

  /** Like `read`, saying whether the slice holds more events than this page (see SessionLog.getEventPage). */
  readPage(segments: readonly Segment[], slice: EventSlice): { events: LoggedEvent[]; more: boolean } {
    const limit = slice.limit ?? 1000;
    checkLimit(limit, slice.limit);
    // One row more than asked tells whether the limit cut the slice short.
    const { rows, more } = this.scan('rows', segments, { ...slice, limit: limit + 1 });
    const cut = rows.length > limit;
    if (cut) rows.pop();
    return { events: rows.map(rowToEvent), more: cut || more };
  }

  private scan(columns: 'rows', segments: readonly Segment[], slice: EventSlice): Scan<FullRow>;
  private scan(columns: 'bytes', segments: readonly Segment[], slice: EventSlice): Scan<ByteRow>;
  private scan(columns: 'heads', segments: readonly Segment[], slice: EventSlice): Scan<EventHead>;
  private scan(columns: Columns, segments: readonly Segment[], slice: EventSlice): Scan<FullRow | ByteRow | EventHead> {
    checkPosition('after', slice.after);
    checkPosition('before', slice.before);
    checkPosition('from', slice.from);
    checkPosition('to', slice.to);
    // Callers check the limit a caller gave; a page asks for one row more.
    const limit = slice.limit ?? 1000;
    const maxBytes = slice.maxBytes;
    if (maxBytes !== undefined && (!Number.isInteger(maxBytes) || maxBytes < 1)) {
      throw new LogInputError(`slice.maxBytes must be a whole number >= 1, got ${String(maxBytes)}`);
    }
    if (slice.order !== undefined && slice.order !== 'asc' && slice.order !== 'desc') {
      throw new LogInputError(`slice.order must be 'asc' or 'desc'`);
    }
    if (slice.types !== undefined && (!Array.isArray(slice.types) || slice.types.some((t) => typeof t !== 'string'))) {
      throw new LogInputError('slice.types must be a list of event type names');
    }
    const hasLower = slice.after !== undefined || slice.from !== undefined;
    const lo = Math.max(slice.after !== undefined ? slice.after + 1 : 1, slice.from ?? 1);
    const hi = Math.min(
      slice.before !== undefined ? slice.before - 1 : Number.MAX_SAFE_INTEGER,
      slice.to ?? Number.MAX_SAFE_INTEGER,
    );
    if (lo > hi) return { rows: [], more: false };
    const fromEnd = !hasLower && (slice.order === 'desc' || slice.before !== undefined);
    const typesJson = slice.types && slice.types.length > 0 ? JSON.stringify(slice.types) : undefined;
    const scanOrder = fromEnd ? 'desc' : 'asc';
    const times: TimeBound[] = [];
    if (slice.processedAfter !== undefined) times.push({ op: '>', value: slice.processedAfter });
    if (slice.processedFrom !== undefined) times.push({ op: '>=', value: slice.processedFrom });
    if (slice.processedBefore !== undefined) times.push({ op: '<', value: slice.processedBefore });
    if (slice.processedTo !== undefined) times.push({ op: '<=', value: slice.processedTo });
    const stmt = this.statement(columns, scanOrder, typesJson !== undefined, times);
    const timeValues = times.map((t) => t.value);
    const ordered = fromEnd ? [...segments].reverse() : segments;

    const out: (FullRow | ByteRow | EventHead)[] = [];
    let bytes = 0;
    let full = false;
    for (const seg of ordered) {
      const a = Math.max(lo, seg.lo);
      const b = Math.min(hi, seg.hi);
      if (a > b) continue;
      const want = limit - out.length;
      const params: unknown[] = [seg.sessionId, a, b];
      if (typesJson !== undefined) params.push(typesJson);
      // Row by row, so that a byte-bounded slice loads no event past the one that fills it.
      for (const row of stmt.iterate(...params, ...timeValues, want) as IterableIterator<FullRow | ByteRow | EventHead>) {
        out.push(row);
        if (maxBytes !== undefined && (bytes += row.bytes) >= maxBytes) {
          full = true;
          break;
        }
      }
      if (full || out.length >= limit) break;
    }
    const wantOrder = slice.order ?? 'asc';
    if (wantOrder !== scanOrder) out.reverse();
    return { rows: out, more: full };
  }
}

function checkLimit(limit: number, given: unknown): void {
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT) {
    throw new LogInputError(`slice.limit must be a whole number from 1 to ${MAX_LIMIT}, got ${String(given)}`);
  }
}
