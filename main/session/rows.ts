import type { Database, Statement } from 'better-sqlite3';
import type { SessionRow, SessionStatus, SessionUsageTotals } from './types';

/** A row of the `sessions` table as SQLite returns it. */
export interface SessionDbRow {
  id: string;
  created_at: string;
  updated_at: string;
  archived_at: string | null;
  deleted_at: string | null;
  parent_id: string | null;
  fork_seq: number | null;
  status: string;
  agent_id: string | null;
  agent_version: number | null;
  environment_id: string | null;
  usage: string;
  record: string;
}

/**
 * What an append reads of a session's row: not its record (an agent's whole configuration), and
 * with the position of its own newest event (null: none yet).
 */
export type SessionAppendRow = Pick<SessionDbRow, 'id' | 'deleted_at' | 'parent_id' | 'fork_seq' | 'usage'> & { own_last_seq: number | null };

/** A session's last position: its own newest event, or the fork point of a fork with none. */
export const lastPosition = (ownLast: number | null, forkSeq: number | null): number => ownLast ?? forkSeq ?? 0;

/** The values a new session row is inserted with. */
export type NewSessionRow = Omit<SessionDbRow, 'archived_at' | 'deleted_at'>;

/**
 * The session log's reads and writes of `sessions` rows (SessionLog's private helper): finding a
 * row, turning it into the API's SessionRow, and the queries over many rows.
 */
export class SessionRows {
  private readonly q: Record<'session' | 'appendRow' | 'insertSession' | 'lastSeq' | 'setStatus' | 'setUsage', Statement>;

  constructor(private readonly db: Database) {
    this.q = {
      session: db.prepare('SELECT * FROM sessions WHERE id = ?'),
      appendRow: db.prepare(
        'SELECT id, deleted_at, parent_id, fork_seq, usage, (SELECT max(seq) FROM events WHERE session_id = sessions.id) AS own_last_seq FROM sessions WHERE id = ?',
      ),
      insertSession: db.prepare(
        `INSERT INTO sessions (id, created_at, updated_at, parent_id, fork_seq, status, agent_id, agent_version, environment_id, usage, record)
         VALUES (@id, @created_at, @updated_at, @parent_id, @fork_seq, @status, @agent_id, @agent_version, @environment_id, @usage, @record)`,
      ),
      lastSeq: db.prepare('SELECT max(seq) AS seq FROM events WHERE session_id = ?'),
      setStatus: db.prepare('UPDATE sessions SET status = ?, updated_at = ? WHERE id = ?'),
      setUsage: db.prepare('UPDATE sessions SET usage = ? WHERE id = ?'),
    };
  }

  /** The row with this id, deleted or not (what segmentsOf walks up a fork's parents with). */
  readonly lookup = (id: string) => this.q.session.get(id) as SessionDbRow | undefined;

  /** The row of a session that exists and is not deleted. */
  find(id: string): SessionDbRow | undefined {
    if (typeof id !== 'string') return undefined;
    const row = this.lookup(id);
    return row && row.deleted_at === null ? row : undefined;
  }

  /**
   * The row of a session that exists and is not deleted, as an append needs it: every append
   * reads it, and copying the record (kilobytes for an agent with a long system prompt) each
   * time cost the host's event loop for nothing.
   */
  findForAppend(id: string): SessionAppendRow | undefined {
    const row = this.q.appendRow.get(id) as SessionAppendRow | undefined;
    return row && row.deleted_at === null ? row : undefined;
  }

  insert(row: NewSessionRow): void {
    this.q.insertSession.run(row);
  }

  setStatus(id: string, status: SessionStatus): void {
    this.q.setStatus.run(status, new Date().toISOString(), id);
  }

  setUsage(id: string, usage: SessionUsageTotals): void {
    this.q.setUsage.run(JSON.stringify(usage), id);
  }

  /** The session's last position: its own newest event, or the fork point of a fork with none. */
  lastSeqOf(row: Pick<SessionDbRow, 'id' | 'fork_seq'>): number {
    return lastPosition((this.q.lastSeq.get(row.id) as { seq: number | null }).seq, row.fork_seq);
  }

  toSession(row: SessionDbRow): SessionRow {
    return {
      id: row.id,
      created_at: row.created_at,
      updated_at: row.updated_at,
      archived_at: row.archived_at,
      status: row.status as SessionStatus,
      parent_id: row.parent_id,
      fork_seq: row.fork_seq,
      last_seq: this.lastSeqOf(row),
      agent_id: row.agent_id,
      agent_version: row.agent_version,
      environment_id: row.environment_id,
      usage: JSON.parse(row.usage) as SessionUsageTotals,
      record: JSON.parse(row.record) as Record<string, unknown>,
    };
  }

  /**
   * Sessions a host starting up must wake: running when the last host stopped, or with input
   * that no brain had picked up yet (a message, a result or a confirmation after the last idle).
   */
  toResume(): string[] {
    const rows = this.db
      .prepare(
        // Input after the last idle, whatever came after it (a hand attached, a title changed).
        `SELECT s.id FROM sessions s WHERE s.deleted_at IS NULL AND s.archived_at IS NULL AND (
           s.status IN ('running', 'rescheduling') OR EXISTS (
             SELECT 1 FROM events e WHERE e.session_id = s.id
               AND e.type IN ('user.message', 'user.tool_result', 'user.custom_tool_result', 'system.message', 'user.tool_confirmation')
               AND e.seq > COALESCE((SELECT MAX(i.seq) FROM events i WHERE i.session_id = s.id AND i.type = 'session.status_idle'), 0)))`,
      )
      .all() as { id: string }[];
    return rows.map((r) => r.id);
  }

  /** Ids of the sessions forked from this one (not deleted), oldest first. */
  forkIds(id: string): string[] {
    const rows = this.db.prepare('SELECT id FROM sessions WHERE parent_id = ? AND deleted_at IS NULL ORDER BY created_at, id').all(id) as { id: string }[];
    return rows.map((r) => r.id);
  }
}
