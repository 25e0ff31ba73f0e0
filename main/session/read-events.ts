import type { Database, Statement } from 'better-sqlite3';
import type { Segment } from './segments';
import { LogInputError, type EventSlice, type LoggedEvent } from './types';

const MAX_LIMIT = 100_000;

interface TimeBound {
  op: '>' | '>=' | '<' | '<=';
  value: string;
}

interface Row {
  seq: number;
  body: string;
}

/** Turns a stored row into the event a reader sees (seq is the row's position). */
export function rowToEvent(row: Row): LoggedEvent {
  const event = JSON.parse(row.body) as LoggedEvent;
  event.seq = row.seq;
  return event;
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

  private statement(order: 'asc' | 'desc', typed: boolean, times: readonly TimeBound[]): Statement {
    const key = `${order}|${typed}|${times.map((t) => t.op).join(',')}`;
    let stmt = this.cache.get(key);
    if (!stmt) {
      const sql =
        `SELECT seq, body FROM events WHERE session_id = ? AND seq BETWEEN ? AND ?` +
        (typed ? ` AND type IN (SELECT value FROM json_each(?))` : '') +
        times.map((t) => ` AND processed_at ${t.op} ?`).join('') +
        ` ORDER BY seq ${order === 'asc' ? 'ASC' : 'DESC'} LIMIT ?`;
      stmt = this.db.prepare(sql);
      this.cache.set(key, stmt);
    }
    return stmt;
  }

  read(segments: readonly Segment[], slice: EventSlice): LoggedEvent[] {
    checkPosition('after', slice.after);
    checkPosition('before', slice.before);
    checkPosition('from', slice.from);
    checkPosition('to', slice.to);
    const limit = slice.limit ?? 1000;
    if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT) {
      throw new LogInputError(`slice.limit must be a whole number from 1 to ${MAX_LIMIT}, got ${String(slice.limit)}`);
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
    if (lo > hi) return [];
    const fromEnd = !hasLower && (slice.order === 'desc' || slice.before !== undefined);
    const typesJson = slice.types && slice.types.length > 0 ? JSON.stringify(slice.types) : undefined;
    const scanOrder = fromEnd ? 'desc' : 'asc';
    const times: TimeBound[] = [];
    if (slice.processedAfter !== undefined) times.push({ op: '>', value: slice.processedAfter });
    if (slice.processedFrom !== undefined) times.push({ op: '>=', value: slice.processedFrom });
    if (slice.processedBefore !== undefined) times.push({ op: '<', value: slice.processedBefore });
    if (slice.processedTo !== undefined) times.push({ op: '<=', value: slice.processedTo });
    const stmt = this.statement(scanOrder, typesJson !== undefined, times);
    const timeValues = times.map((t) => t.value);
    const ordered = fromEnd ? [...segments].reverse() : segments;

    const out: LoggedEvent[] = [];
    for (const seg of ordered) {
      const a = Math.max(lo, seg.lo);
      const b = Math.min(hi, seg.hi);
      if (a > b) continue;
      const want = limit - out.length;
      const params: unknown[] = [seg.sessionId, a, b];
      if (typesJson !== undefined) params.push(typesJson);
      const rows = stmt.all(...params, ...timeValues, want) as Row[];
      for (const row of rows) out.push(rowToEvent(row));
      if (out.length >= limit) break;
    }
    const wantOrder = slice.order ?? 'asc';
    if (wantOrder !== scanOrder) out.reverse();
    return out;
  }
}
