import type { Database, Statement } from 'better-sqlite3';
import type { Segment } from './segments';
import { LogInputError, type EventSlice, type LoggedEvent } from './types';

const MAX_LIMIT = 100_000;

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

/** Reads positional slices across a session's segments with a few prepared statements. */
export class EventReader {
  private readonly stmts: Record<'asc' | 'desc', Record<'all' | 'typed', Statement>>;

  constructor(db: Database) {
    const sql = (order: 'ASC' | 'DESC', typed: boolean) =>
      `SELECT seq, body FROM events WHERE session_id = ? AND seq BETWEEN ? AND ?` +
      (typed ? ` AND type IN (SELECT value FROM json_each(?))` : '') +
      ` ORDER BY seq ${order} LIMIT ?`;
    this.stmts = {
      asc: { all: db.prepare(sql('ASC', false)), typed: db.prepare(sql('ASC', true)) },
      desc: { all: db.prepare(sql('DESC', false)), typed: db.prepare(sql('DESC', true)) },
    };
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
    const stmt = this.stmts[scanOrder][typesJson ? 'typed' : 'all'];
    const ordered = fromEnd ? [...segments].reverse() : segments;

    const out: LoggedEvent[] = [];
    for (const seg of ordered) {
      const a = Math.max(lo, seg.lo);
      const b = Math.min(hi, seg.hi);
      if (a > b) continue;
      const want = limit - out.length;
      const rows = (typesJson ? stmt.all(seg.sessionId, a, b, typesJson, want) : stmt.all(seg.sessionId, a, b, want)) as Row[];
      for (const row of rows) out.push(rowToEvent(row));
      if (out.length >= limit) break;
    }
    const wantOrder = slice.order ?? 'asc';
    if (wantOrder !== scanOrder) out.reverse();
    return out;
  }
}
