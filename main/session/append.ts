import type { Database, Statement } from 'better-sqlite3';
import { newId } from '../db/ids';
import { rowToEvent } from './read-events';
import type { SessionAppendRow, SessionRows } from './rows';
import type { Segment } from './segments';
import { LogInputError, type EventInput, type LoggedEvent, type SessionStatus, type SessionUsageTotals } from './types';
import { checkEventInput, serialiseEvent } from './validate-event';
import { addUsage, statusOf } from './derived';

/**
 * The session log's write path for events (SessionLog's private helper): appending inside an
 * open write transaction, and finding what an idempotency key appended before.
 */
export class EventAppender {
  private readonly q: Record<'idem' | 'insertEvent' | 'lastEvent', Statement>;

  constructor(
    db: Database,
    private readonly rows: SessionRows,
  ) {
    this.q = {
      idem: db.prepare('SELECT seq, body FROM events WHERE session_id = ? AND idem_key = ? AND seq BETWEEN ? AND ?'),
      insertEvent: db.prepare('INSERT INTO events (session_id, seq, id, type, processed_at, idem_key, body) VALUES (?, ?, ?, ?, ?, ?, ?)'),
      lastEvent: db.prepare('SELECT seq, body FROM events WHERE session_id = ? ORDER BY seq DESC LIMIT 1'),
    };
  }

  /** The newest event stored under this session's own id (not its fork parent's). */
  lastEventOf(id: string): LoggedEvent | undefined {
    const row = this.q.lastEvent.get(id) as { seq: number; body: string } | undefined;
    return row ? rowToEvent(row) : undefined;
  }

  /**
   * The events a previous append with `key` made (event i under `key` or `key#i`), looked up
   * in the session's segments; undefined when the key is new.
   */
  findByKey(segs: readonly Segment[], key: string, count: number): LoggedEvent[] | undefined {
    const found: LoggedEvent[] = [];
    for (let i = 0; i < count; i++) {
      const k = i === 0 ? key : `${key}#${i}`;
      let hit: LoggedEvent | undefined;
      for (const s of segs) {
        const row = this.q.idem.get(s.sessionId, k, s.lo, s.hi) as { seq: number; body: string } | undefined;
        if (row) {
          hit = rowToEvent(row);
          break;
        }
      }
      if (!hit) {
        if (i === 0) return undefined;
        throw new LogInputError(`idempotency key '${key}' was first used for ${i} event(s), not ${count}`);
      }
      found.push(hit);
    }
    return found;
  }

  /**
   * Appends inside an open write transaction after position `lastSeq` (the session's last);
   * keeps the row's status and usage in step.
   */
  appendLocked(row: Pick<SessionAppendRow, 'id' | 'usage'>, lastSeq: number, events: readonly EventInput[], key: string | undefined): LoggedEvent[] {
    const sessionId = row.id;
    let seq = lastSeq;
    let usage: SessionUsageTotals | undefined;
    let status: SessionStatus | undefined;
    const out: LoggedEvent[] = [];
    for (let i = 0; i < events.length; i++) {
      const input = events[i]!;
      seq += 1;
      const id = typeof input.id === 'string' ? input.id : newId.event();
      const event: LoggedEvent = { ...input, id, type: input.type, processed_at: new Date().toISOString(), seq };
      const { seq: _omit, ...stored } = event;
      const k = key === undefined ? null : i === 0 ? key : `${key}#${i}`;
      try {
        this.q.insertEvent.run(sessionId, seq, event.id, event.type, event.processed_at, k, serialiseEvent(stored, `events[${i}]`));
      } catch (err) {
        if ((err as { code?: string }).code === 'SQLITE_CONSTRAINT_UNIQUE' && /events\.id/.test(String(err))) {
          throw new LogInputError(`events[${i}].id ${event.id} is already in the log`);
        }
        throw err;
      }
      status = statusOf(event.type) ?? status;
      if (event.type === 'span.model_request_end') usage = addUsage(usage ?? (JSON.parse(row.usage) as SessionUsageTotals), event);
      out.push(event);
    }
    if (status) this.rows.setStatus(sessionId, status);
    if (usage) this.rows.setUsage(sessionId, usage);
    return out;
  }
}

/** One append of emitEventGroups. */
export interface AppendGroup {
  events: readonly EventInput[];
  key?: string;
}

/** What an append made, and whether it made it now (not a repeated key). */
export type Appended = { out: LoggedEvent[]; fresh: boolean };

/** Refuses an append that cannot be made, before any write. */
export function checkAppend(events: readonly EventInput[], idempotencyKey: string | undefined): void {
  if (events.length === 0) throw new LogInputError('no events to append');
  events.forEach((e, i) => checkEventInput(e, `events[${i}]`));
  if (idempotencyKey !== undefined && (typeof idempotencyKey !== 'string' || idempotencyKey.length === 0 || idempotencyKey.length > 255)) {
    throw new LogInputError('an idempotency key must be a string of 1 to 255 characters');
  }
}

/** Makes each append with `append`; one that fails gives its error and undoes only itself (in a savepoint). */
export function appendEach(groups: readonly AppendGroup[], append: (g: AppendGroup) => Appended): (Appended | Error)[] {
  return groups.map((g) => {
    try {
      checkAppend(g.events, g.key);
      return append(g);
    } catch (err) {
      return err instanceof Error ? err : new Error(String(err));
    }
  });
}
