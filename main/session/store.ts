import type { Database, Statement, Transaction } from 'better-sqlite3';
import { appendEach, checkAppend, EventAppender, type AppendGroup, type Appended } from './append';
import { newId } from '../db/ids';
import type { Page } from '../db/pagination';
import { listSessionIds, type SessionListQuery } from './list';
import { EventReader, rowToEvent } from './read-events';
import { lastPosition, SessionRows } from './rows';
import { segmentsOf, type Segment } from './segments';
import { Topic } from './subscriptions';
import {
  LogInputError,
  SessionNotFoundError,
  type EventHead,
  type EventInput,
  type EventJson,
  type EventSlice,
  type LoggedEvent,
  type SessionRow,
  type SessionUsageTotals,
} from './types';
import { checkEventInput } from './validate-event';
import { emptyUsage, statusOf, usageThrough, usageThroughPaged, USAGE_EVENT, type UsagePageReader } from './derived';
import { TypedReader, type TypedSlice } from './typed-read';

/** Fields a caller sets when creating a session. */
export interface NewSession {
  agent_id?: string | null;
  agent_version?: number | null;
  environment_id?: string | null;
  record?: Record<string, unknown>;
}

/** A change to the set of sessions, for list views. */
export interface SessionChange {
  kind: 'created' | 'updated' | 'deleted';
  sessionId: string;
}

/** An appended event and the session it belongs to. */
export interface LoggedEventOf {
  sessionId: string;
  event: LoggedEvent;
}

/** Options of an append. */
export interface EmitOptions {
  /** A key already used in this session returns the event it made and appends nothing. */
  idempotencyKey?: string;
}

/** Events that change what a session list shows besides the status: the hands a session holds. */
const LIST_VISIBLE_EVENTS = new Set(['hand.attached', 'hand.released', 'hand.handed_over', 'hand.received']);

/**
 * The session log: sessions and their append-only, gaplessly numbered events in one SQLite
 * file. Safe to use from several processes on one file (writers serialise on SQLite's write
 * lock); subscriptions see the appends made through this instance.
 */
export class SessionLog {
  private readonly reader: EventReader;
  private readonly typed: TypedReader;
  private readonly events = new Topic<string, LoggedEvent>();
  private readonly sessions = new Topic<'all', SessionChange>();
  private readonly everything = new Topic<'all', LoggedEventOf>();
  private readonly rows: SessionRows;
  private readonly appender: EventAppender;
  private readonly byId: Statement;
  private readonly appendTx: Transaction<SessionLog['appendInTx']>;
  private readonly groupTx: Transaction<(sessionId: string, groups: readonly AppendGroup[]) => (Appended | Error)[]>;

  constructor(private readonly db: Database) {
    this.reader = new EventReader(db);
    this.typed = new TypedReader(db);
    this.rows = new SessionRows(db);
    this.appender = new EventAppender(db, this.rows);
    this.byId = db.prepare('SELECT session_id, seq, body FROM events WHERE id = ?');
    this.appendTx = db.transaction((sessionId, events, key) => this.appendInTx(sessionId, events, key));
    // A group of several events in a savepoint (a transaction inside one): a failure undoes only
    // it. One of one event needs none (two statements less): its insert, the only write, fails whole.
    this.groupTx = db.transaction((sessionId, groups) =>
      appendEach(groups, (g) => (g.events.length === 1 ? this.appendInTx(sessionId, g.events, g.key) : this.appendTx(sessionId, g.events, g.key))),
    );
  }

  // ---- sessions ----

  /** Creates a session, appending `initialEvents` in the same transaction. */
  createSession(init: NewSession = {}, initialEvents: readonly EventInput[] = []): { session: SessionRow; events: LoggedEvent[] } {
    initialEvents.forEach((e, i) => checkEventInput(e, `initial_events[${i}]`));
    const id = newId.session();
    const now = new Date().toISOString();
    const events = this.db
      .transaction(() => {
        this.rows.insert({
          id,
          created_at: now,
          updated_at: now,
          parent_id: null,
          fork_seq: null,
          status: 'idle',
          agent_id: init.agent_id ?? null,
          agent_version: init.agent_version ?? null,
          environment_id: init.environment_id ?? null,
          usage: JSON.stringify(emptyUsage()),
          record: JSON.stringify(init.record ?? {}),
        });
        return this.appender.appendLocked(this.lookup(id)!, 0, initialEvents, undefined);
      })
      .immediate();
    this.sessions.publish('all', { kind: 'created', sessionId: id });
    this.publish(id, events);
    return { session: this.getSession(id), events };
  }

  /** The session's record; throws SessionNotFoundError for an unknown or deleted id. */
  getSession(id: string): SessionRow {
    const row = this.rows.find(id);
    if (!row) throw new SessionNotFoundError(id);
    return this.rows.toSession(row);
  }

  /** Like getSession, but undefined for an unknown or deleted id. */
  findSession(id: string): SessionRow | undefined {
    const row = this.rows.find(id);
    return row ? this.rows.toSession(row) : undefined;
  }

  /** One page of sessions, newest first unless `q.order` says otherwise. */
  listSessions(q: SessionListQuery): Page<SessionRow> {
    const page = listSessionIds(this.db, q);
    return { ...page, data: page.data.flatMap((id) => this.findSession(id) ?? []) };
  }

  /**
   * Sessions a host starting up must wake: running when the last host stopped, or with input
   * that no brain had picked up yet (the newest event is a message or a result).
   */
  sessionsToResume(): string[] {
    return this.rows.toResume();
  }

  /** The database file, for readers in other threads (worker threads open it read-only). */
  get file(): string {
    return this.db.name;
  }

  /** Closes the database (the log is unusable afterwards). */
  close(): void {
    this.db.close();
  }

  /** Replaces the API layer's record of a session (title, metadata, …). */
  /** `update` returns the new record, or undefined when nothing changes (no write, updated_at kept). */
  updateSessionRecord(id: string, update: (record: Record<string, unknown>) => Record<string, unknown> | undefined): SessionRow {
    const written = this.db
      .transaction(() => {
        const row = this.rows.find(id);
        if (!row) throw new SessionNotFoundError(id);
        const record = update(JSON.parse(row.record) as Record<string, unknown>);
        if (!record) return false;
        this.db.prepare('UPDATE sessions SET record = ?, updated_at = ? WHERE id = ?').run(JSON.stringify(record), new Date().toISOString(), id);
        return true;
      })
      .immediate();
    if (written) this.sessions.publish('all', { kind: 'updated', sessionId: id });
    return this.getSession(id);
  }

  archiveSession(id: string): SessionRow {
    const now = new Date().toISOString();
    const res = this.db
      .prepare('UPDATE sessions SET archived_at = coalesce(archived_at, ?), updated_at = ? WHERE id = ? AND deleted_at IS NULL')
      .run(now, now, id);
    if (res.changes === 0) throw new SessionNotFoundError(id);
    this.sessions.publish('all', { kind: 'updated', sessionId: id });
    return this.getSession(id);
  }

  /**
   * Deletes a session: it disappears from every read at once. Its events are removed from the
   * file too unless a fork still shares them; then they stay, unreachable except through it.
   */
  deleteSession(id: string): void {
    const deleted = this.db
      .transaction(() => {
        const row = this.rows.find(id);
        if (!row) throw new SessionNotFoundError(id);
        // As appended: purged below when no fork depends on it, it could not be read back to publish.
        const [event] = this.appender.appendLocked(row, this.rows.lastSeqOf(row), [{ type: 'session.deleted' }], undefined);
        this.db.prepare('UPDATE sessions SET deleted_at = ?, updated_at = ? WHERE id = ?').run(
          new Date().toISOString(),
          new Date().toISOString(),
          id,
        );
        const dependents = this.db.prepare('SELECT count(*) AS n FROM sessions WHERE parent_id = ?').get(id) as { n: number };
        if (dependents.n === 0) {
          this.db.prepare('INSERT INTO event_purge_grants (session_id) VALUES (?)').run(id);
          this.db.prepare('DELETE FROM events WHERE session_id = ?').run(id);
          this.db.prepare('DELETE FROM event_purge_grants WHERE session_id = ?').run(id);
        }
        return event;
      })
      .immediate();
    if (deleted) this.publish(id, [deleted]);
    this.sessions.publish('all', { kind: 'deleted', sessionId: id });
  }

  /**
   * Makes a new session whose log is this one's first `atSeq` events (shared, not copied),
   * recording its parent and fork point. Agent, environment and record are inherited.
   */
  forkSession(id: string, atSeq: number, overrides: NewSession = {}): SessionRow {
    this.checkForkPoint(id, atSeq);
    return this.insertFork(id, atSeq, overrides, usageThrough(this.usagePages(id), atSeq));
  }

  /**
   * forkSession, with the prefix's usage read a page at a time and a turn of the event loop
   * between pages: a fork of a long session does not hold up every other session meanwhile.
   * `recheck` (throwing to refuse) runs just before the fork is written.
   */
  async forkSessionPaged(id: string, atSeq: number, overrides: NewSession = {}, recheck?: () => void): Promise<SessionRow> {
    this.checkForkPoint(id, atSeq);
    const usage = await usageThroughPaged(this.usagePages(id), atSeq);
    // The parent's first atSeq events never change; insertFork checks it still exists, and the
    // caller's own checks run again with no turn of the loop between them and the write.
    recheck?.();
    return this.insertFork(id, atSeq, overrides, usage);
  }

  private checkForkPoint(id: string, atSeq: number): void {
    const parent = this.getSession(id);
    if (!Number.isInteger(atSeq) || atSeq < 0 || atSeq > parent.last_seq) {
      throw new LogInputError(`fork point must be a position from 0 to ${parent.last_seq}, got ${String(atSeq)}`);
    }
  }

  /** Reads a session's model request ends through the type index (the only events usage needs). */
  private usagePages(id: string): UsagePageReader {
    return (slice) => this.typed.read(segmentsOf(id, this.lookup), [USAGE_EVENT], slice);
  }

  private insertFork(id: string, atSeq: number, overrides: NewSession, usage: SessionUsageTotals): SessionRow {
    const childId = newId.session();
    const now = new Date().toISOString();
    this.db
      .transaction(() => {
        const parent = this.getSession(id);
        // A fork starts idle: nothing runs in it until someone asks.
        this.rows.insert({
          id: childId,
          created_at: now,
          updated_at: now,
          parent_id: id,
          fork_seq: atSeq,
          status: 'idle',
          agent_id: overrides.agent_id ?? parent.agent_id,
          agent_version: overrides.agent_version ?? parent.agent_version,
          environment_id: overrides.environment_id ?? parent.environment_id,
          usage: JSON.stringify(usage),
          record: JSON.stringify(overrides.record ?? parent.record),
        });
      })
      .immediate();
    this.sessions.publish('all', { kind: 'created', sessionId: childId });
    return this.getSession(childId);
  }

  // ---- events ----

  /** Sessions forked from this one (not deleted), oldest first: the other direction of `parent_id`. */
  listForks(id: string): SessionRow[] {
    this.getSession(id);
    return this.rows.forkIds(id).flatMap((forkId) => this.findSession(forkId) ?? []);
  }

  /** Appends one event; returns it with its id, processed_at and seq once committed. */
  emitEvent(sessionId: string, event: EventInput, opts: EmitOptions = {}): LoggedEvent {
    return this.emitEvents(sessionId, [event], opts.idempotencyKey)[0]!;
  }

  /**
   * Appends several events atomically, in order. With an idempotency key, event i uses
   * `key` (i = 0) or `key#i`; a repeated call returns the events the first one made.
   */
  emitEvents(sessionId: string, events: readonly EventInput[], idempotencyKey?: string): LoggedEvent[] {
    checkAppend(events, idempotencyKey);
    const { out, fresh } = this.appendTx.immediate(sessionId, events, idempotencyKey);
    if (fresh) this.publish(sessionId, out);
    return out;
  }

  /**
   * Several appends, each as emitEvents would make it (its events, its key), committed together:
   * one commit for what a brain sends in one message. Each succeeds or fails on its own.
   */
  emitEventGroups(sessionId: string, groups: readonly AppendGroup[]): (LoggedEvent[] | Error)[] {
    const results = this.groupTx.immediate(sessionId, groups);
    for (const r of results) if (!(r instanceof Error) && r.fresh) this.publish(sessionId, r.out);
    return results.map((r) => (r instanceof Error ? r : r.out));
  }

  /** emitEvents' transaction body (made into a transaction once: better-sqlite3 builds a wrapper per `transaction` call). */
  private appendInTx(sessionId: string, events: readonly EventInput[], idempotencyKey: string | undefined): Appended {
    const row = this.rows.findForAppend(sessionId);
    if (!row) throw new SessionNotFoundError(sessionId);
    if (idempotencyKey !== undefined) {
      // The session's own row is at hand: only a fork's parents are looked up.
      const segments = segmentsOf(sessionId, (id) => (id === sessionId ? row : this.lookup(id)));
      const prior = this.appender.findByKey(segments, idempotencyKey, events.length);
      if (prior) return { out: prior, fresh: false };
    }
    return { out: this.appender.appendLocked(row, lastPosition(row.own_last_seq, row.fork_seq), events, idempotencyKey), fresh: true };
  }

  /** A positional slice of the session's log (see EventSlice). */
  getEvents(sessionId: string, slice: EventSlice = {}): LoggedEvent[] {
    if (!this.rows.find(sessionId)) throw new SessionNotFoundError(sessionId);
    return this.reader.read(segmentsOf(sessionId, this.lookup), slice);
  }

  /**
   * One page of a slice and whether the slice goes on past it (the page stopped at its `limit`
   * or `maxBytes`; after a byte-bounded page the rest may turn out empty).
   */
  getEventPage(sessionId: string, slice: EventSlice = {}): { events: LoggedEvent[]; more: boolean } {
    if (!this.rows.find(sessionId)) throw new SessionNotFoundError(sessionId);
    return this.reader.readPage(segmentsOf(sessionId, this.lookup), slice);
  }

  /** A slice as the JSON text of each event, not parsed: for readers that only pass events on. */
  getEventJson(sessionId: string, slice: EventSlice = {}): EventJson[] {
    if (!this.rows.find(sessionId)) throw new SessionNotFoundError(sessionId);
    return this.reader.readJson(segmentsOf(sessionId, this.lookup), slice);
  }

  /**
   * A slice's positions, ids, types and sizes, without loading the events: a reader that sends
   * what it reads sizes its pages with it, and reads only the events it does not hold already.
   */
  getEventHeads(sessionId: string, slice: EventSlice = {}): EventHead[] {
    if (!this.rows.find(sessionId)) throw new SessionNotFoundError(sessionId);
    return this.reader.readHeads(segmentsOf(sessionId, this.lookup), slice);
  }

  /**
   * The events of these types, oldest first, read through the type index: costs only the events
   * of those types however long the session is (for rare types such as hand membership).
   */
  getEventsOfTypes(sessionId: string, types: readonly string[], slice: TypedSlice = {}): LoggedEvent[] {
    if (!this.rows.find(sessionId)) throw new SessionNotFoundError(sessionId);
    return this.typed.read(segmentsOf(sessionId, this.lookup), types, slice);
  }

  /** The event with this id if it is part of the session's log (its own or shared by a fork). */
  findEvent(sessionId: string, eventId: string): LoggedEvent | undefined {
    const row = this.byId.get(eventId) as { session_id: string; seq: number; body: string } | undefined;
    if (!row) return undefined;
    const seg = this.segments(sessionId).find((s) => s.sessionId === row.session_id && row.seq >= s.lo && row.seq <= s.hi);
    return seg ? rowToEvent(row) : undefined;
  }

  /** Calls `listener` with each event appended to the session from now on, after commit. */
  subscribe(sessionId: string, listener: (event: LoggedEvent) => void): () => void {
    return this.events.subscribe(sessionId, listener);
  }

  /** Calls `listener` with every event appended to any session (the brain supervisor's view). */
  subscribeAll(listener: (item: LoggedEventOf) => void): () => void {
    return this.everything.subscribe('all', listener);
  }

  /** Calls `listener` when a session is created, changed or deleted. */
  subscribeSessions(listener: (change: SessionChange) => void): () => void {
    return this.sessions.subscribe('all', listener);
  }

  segments(sessionId: string): Segment[] {
    return segmentsOf(sessionId, this.lookup);
  }

  // ---- internals ----

  private publish(sessionId: string, events: readonly LoggedEvent[]): void {
    let statusChanged = false;
    for (const event of events) {
      this.events.publish(sessionId, event);
      this.everything.publish('all', { sessionId, event });
      statusChanged ||= statusOf(event.type) !== undefined || LIST_VISIBLE_EVENTS.has(event.type);
    }
    // List views show the status and the hands held: tell them when either changes.
    if (statusChanged) this.sessions.publish('all', { kind: 'updated', sessionId });
  }

  private readonly lookup = (id: string) => this.rows.lookup(id);
  /** True when an append with this idempotency key was made already (a repeat returns its events). */
  hasIdempotencyKey(sessionId: string, key: string): boolean {
    return this.appender.findByKey(this.segments(sessionId), key, 1) !== undefined;
  }
}
