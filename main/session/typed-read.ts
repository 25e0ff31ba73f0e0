import type { Database, Statement } from 'better-sqlite3';
import { rowToEvent } from './read-events';
import type { Segment } from './segments';
import { LogInputError, type LoggedEvent } from './types';

/** A slice of the events of a few types, oldest first. */
export interface TypedSlice {
  /** Only events with seq > after. */
  after?: number;
  /** Only events with seq <= to. */
  to?: number;
  /** At most this many events (default 1000). */
  limit?: number;
}

/**
 * Reads the events of given types through the `(session_id, type, seq)` index, one type at a
 * time, merged by position. The general reader's `type IN (…)` lets SQLite walk the position
 * index and test every event's type (a 100k-event session costs 20–60 ms whatever it holds);
 * this costs only the events of those types. For rare types (hand membership) that is a few
 * rows however long the session; for common ones (model request ends) it saves the rest.
 */
export class TypedReader {
  private readonly stmt: Statement;

  constructor(db: Database) {
    this.stmt = db.prepare('SELECT seq, body FROM events INDEXED BY events_type WHERE session_id = ? AND type = ? AND seq BETWEEN ? AND ? ORDER BY seq LIMIT ?');
  }

  read(segments: readonly Segment[], types: readonly string[], slice: TypedSlice = {}): LoggedEvent[] {
    const limit = slice.limit ?? 1000;
    if (!Number.isInteger(limit) || limit < 1) throw new LogInputError(`slice.limit must be a whole number >= 1, got ${String(limit)}`);
    const lo = (slice.after ?? 0) + 1;
    const hi = slice.to ?? Number.MAX_SAFE_INTEGER;
    const out: LoggedEvent[] = [];
    for (const seg of segments) {
      const a = Math.max(lo, seg.lo);
      const b = Math.min(hi, seg.hi);
      if (a > b) continue;
      // The first `want` of the merged types in this segment are among the first `want` of each.
      const want = limit - out.length;
      const rows: { seq: number; body: string }[] = [];
      for (const type of new Set(types)) rows.push(...(this.stmt.all(seg.sessionId, type, a, b, want) as { seq: number; body: string }[]));
      rows.sort((x, y) => x.seq - y.seq);
      for (const row of rows.slice(0, want)) out.push(rowToEvent(row));
      if (out.length >= limit) break;
    }
    return out;
  }
}
