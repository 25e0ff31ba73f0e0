import type { Database } from 'better-sqlite3';
import { monotonicFactory } from 'ulid';
import { decodeCursor, encodeCursor } from '../db/pagination';

const next = monotonicFactory();

/** The states of a work item, as the API names them. */
export type WorkState = 'queued' | 'starting' | 'active' | 'stopping' | 'stopped';

/** A work item as stored (times as the API shows them; the lease in epoch ms). */
export interface WorkRow {
  id: string;
  environment_id: string;
  session_id: string | null;
  /** The session's hand this item serves (a self_hosted environment may be attached under any name). */
  hand: string | null;
  data_type: 'session' | 'healthcheck';
  state: WorkState;
  created_at: string;
  polled_at_ms: number | null;
  worker_id: string | null;
  acknowledged_at: string | null;
  started_at: string | null;
  latest_heartbeat_at: string | null;
  lease_ttl_s: number | null;
  lease_expires_ms: number | null;
  stop_requested_at: string | null;
  stopped_at: string | null;
  stop_reason: string | null;
  metadata: Record<string, string>;
}

/** An environment key's public record (its value is never stored, only its digest). */
export interface EnvironmentKeyRow {
  id: string;
  environment_id: string;
  name: string | null;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
  /** Where its value is kept (an `environment_key` credential); null for keys made before the vault held them. */
  vault_id: string | null;
  credential_id: string | null;
}

/** A worker seen polling an environment. */
export interface WorkerPoll {
  environment_id: string;
  worker_id: string;
  last_poll_ms: number;
}

/** How often, at most, a worker's polls are news to listeners. */
export const POLL_NEWS_MS = 5000;

type RawWork = Omit<WorkRow, 'metadata'> & { metadata: string };
const toRow = (r: RawWork | undefined): WorkRow | undefined => (r ? { ...r, metadata: JSON.parse(r.metadata) as Record<string, string> } : undefined);
const iso = (ms: number) => new Date(ms).toISOString();

/**
 * The store of the self-hosted worker protocol: environment keys (digests) and work items with
 * their leases. Every change is one statement or one immediate transaction, so two workers
 * polling at once can never both claim one item.
 */
export class WorkStore {
  private readonly listeners = new Set<(row: WorkRow) => void>();
  private readonly pollListeners = new Set<(poll: WorkerPoll) => void>();
  private readonly pollsTold = new Map<string, number>();

  constructor(private readonly db: Database) {}

  /**
   * Calls `listener` with an item's row after each committed change to it (created, claimed,
   * acknowledged, heartbeat, stopped, lease expired, metadata): the window's live view of
   * workers. Synchronous, like the session log's subscriptions. Returns the unsubscribe.
   */
  onChange(listener: (row: WorkRow) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private changed(id: string): void {
    if (this.listeners.size === 0) return;
    const row = this.get(id);
    if (!row) return;
    for (const l of [...this.listeners]) {
      try {
        l(row);
      } catch {
        // a listener's failure is its own; the change is committed
      }
    }
  }

  /** The newest items (of one environment or session when named), for a live view's first picture. */
  recent(o: { environmentId?: string; sessionId?: string; limit: number }): WorkRow[] {
    const where = [o.environmentId ? 'environment_id = @environmentId' : '', o.sessionId ? 'session_id = @sessionId' : ''].filter(Boolean);
    const sql = `SELECT * FROM work_items ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY created_at DESC, id DESC LIMIT @limit`;
    return (this.db.prepare(sql).all({ environmentId: o.environmentId ?? null, sessionId: o.sessionId ?? null, limit: o.limit }) as RawWork[]).map((r) => toRow(r)!);
  }

  // ---- environment keys ----

  addKey(environmentId: string, digest: string, name: string | null): EnvironmentKeyRow {
    const id = `envkey_${next()}`;
    this.db.prepare('INSERT INTO environment_keys (id, environment_id, digest, name, created_at) VALUES (?, ?, ?, ?, ?)').run(id, environmentId, digest, name, iso(Date.now()));
    return this.key(id)!;
  }

  key(id: string): EnvironmentKeyRow | undefined {
    return this.db.prepare('SELECT id, environment_id, name, created_at, last_used_at, revoked_at, vault_id, credential_id FROM environment_keys WHERE id = ?').get(id) as EnvironmentKeyRow | undefined;
  }

  /** The live key with this digest (revoked keys are not found). */
  keyByDigest(digest: string): EnvironmentKeyRow | undefined {
    return this.db.prepare('SELECT id, environment_id, name, created_at, last_used_at, revoked_at, vault_id, credential_id FROM environment_keys WHERE digest = ? AND revoked_at IS NULL').get(digest) as EnvironmentKeyRow | undefined;
  }

  keys(environmentId: string): EnvironmentKeyRow[] {
    return this.db.prepare('SELECT id, environment_id, name, created_at, last_used_at, revoked_at, vault_id, credential_id FROM environment_keys WHERE environment_id = ? ORDER BY created_at, id').all(environmentId) as EnvironmentKeyRow[];
  }

  revokeKey(id: string): EnvironmentKeyRow | undefined {
    this.db.prepare('UPDATE environment_keys SET revoked_at = coalesce(revoked_at, ?) WHERE id = ?').run(iso(Date.now()), id);
    return this.key(id);
  }

  /** Records where the key's value is kept in the vault. */
  setKeyCredential(id: string, vaultId: string, credentialId: string): void {
    this.db.prepare('UPDATE environment_keys SET vault_id = ?, credential_id = ? WHERE id = ?').run(vaultId, credentialId, id);
  }

  /** Forgets a key that could not be stored (its value was never shown). */
  deleteKey(id: string): void {
    this.db.prepare('DELETE FROM environment_keys WHERE id = ?').run(id);
  }

  touchKey(id: string): void {
    this.db.prepare('UPDATE environment_keys SET last_used_at = ? WHERE id = ?').run(iso(Date.now()), id);
  }

  // ---- work items ----

  create(environmentId: string, sessionId: string | null, type: WorkRow['data_type'], hand: string | null = null): WorkRow {
    const id = `work_${next()}`;
    this.db.prepare("INSERT INTO work_items (id, environment_id, session_id, hand, data_type, state, created_at) VALUES (?, ?, ?, ?, ?, 'queued', ?)").run(id, environmentId, sessionId, hand, type, iso(Date.now()));
    this.changed(id);
    return this.get(id)!;
  }

  get(id: string): WorkRow | undefined {
    return toRow(this.db.prepare('SELECT * FROM work_items WHERE id = ?').get(id) as RawWork | undefined);
  }

  bySecretDigest(digest: string): WorkRow | undefined {
    return toRow(this.db.prepare('SELECT * FROM work_items WHERE secret_digest = ?').get(digest) as RawWork | undefined);
  }

  /** The session's newest item in this environment that is not stopped or stopping. */
  openFor(sessionId: string, environmentId: string): WorkRow | undefined {
    return toRow(
      this.db
        .prepare("SELECT * FROM work_items WHERE session_id = ? AND environment_id = ? AND state IN ('queued', 'starting', 'active') ORDER BY created_at DESC, id DESC LIMIT 1")
        .get(sessionId, environmentId) as RawWork | undefined,
    );
  }

  /** The session's item that was told to stop but whose worker still holds its lease (undefined: none). */
  windingDown(sessionId: string, environmentId: string, nowMs: number): WorkRow | undefined {
    return toRow(
      this.db
        .prepare("SELECT * FROM work_items WHERE session_id = ? AND environment_id = ? AND state = 'stopping' AND lease_expires_ms >= ? ORDER BY created_at DESC, id DESC LIMIT 1")
        .get(sessionId, environmentId, nowMs) as RawWork | undefined,
    );
  }

  /**
   * Hands the oldest claimable item to a poller: queued and never polled, or polled but not
   * acknowledged for longer than `reclaimMs`. The item's secret digest is replaced, so a
   * reclaimed item's earlier secret stops working.
   */
  claim(environmentId: string, nowMs: number, reclaimMs: number, workerId: string | null, secretDigest: string): WorkRow | undefined {
    const claimed = this.db
      .transaction(() => {
        const row = this.db
          .prepare("SELECT id FROM work_items WHERE environment_id = ? AND state = 'queued' AND (polled_at_ms IS NULL OR polled_at_ms <= ?) ORDER BY created_at, id LIMIT 1")
          .get(environmentId, nowMs - reclaimMs) as { id: string } | undefined;
        if (!row) return undefined;
        this.db.prepare('UPDATE work_items SET polled_at_ms = ?, worker_id = ?, secret_digest = ? WHERE id = ?').run(nowMs, workerId, secretDigest, row.id);
        return this.get(row.id);
      })
      .immediate();
    if (claimed) this.changed(claimed.id);
    return claimed;
  }

  notePoll(environmentId: string, workerId: string, nowMs: number): void {
    this.db
      .prepare('INSERT INTO worker_polls (environment_id, worker_id, last_poll_ms) VALUES (?, ?, ?) ON CONFLICT (environment_id, worker_id) DO UPDATE SET last_poll_ms = excluded.last_poll_ms')
      .run(environmentId, workerId, nowMs);
    // A polling worker asks about once a second: listeners hear of it at most every POLL_NEWS_MS.
    const k = `${environmentId}\u0000${workerId}`;
    if (this.pollListeners.size === 0 || nowMs - (this.pollsTold.get(k) ?? -Infinity) < POLL_NEWS_MS) return;
    this.pollsTold.set(k, nowMs);
    for (const l of [...this.pollListeners]) {
      try {
        l({ environment_id: environmentId, worker_id: workerId, last_poll_ms: nowMs });
      } catch {
        // a listener's failure is its own
      }
    }
  }

  /** Calls `listener` when a worker (named by `Anthropic-Worker-ID`) polls, at most every 5 s per worker. */
  onPoll(listener: (poll: WorkerPoll) => void): () => void {
    this.pollListeners.add(listener);
    return () => this.pollListeners.delete(listener);
  }

  /** Workers that polled since `sinceMs` (of one environment when named), latest first. */
  pollers(sinceMs: number, environmentId?: string): WorkerPoll[] {
    return (
      environmentId
        ? this.db.prepare('SELECT * FROM worker_polls WHERE environment_id = ? AND last_poll_ms >= ? ORDER BY last_poll_ms DESC').all(environmentId, sinceMs)
        : this.db.prepare('SELECT * FROM worker_polls WHERE last_poll_ms >= ? ORDER BY last_poll_ms DESC').all(sinceMs)
    ) as WorkerPoll[];
  }

  /** queued → starting; the lease starts with the ack. False when the item was not queued. */
  ack(id: string, nowMs: number, ttlS: number): boolean {
    const ok =
      this.db
        .prepare("UPDATE work_items SET state = 'starting', acknowledged_at = ?, lease_ttl_s = ?, lease_expires_ms = ? WHERE id = ? AND state = 'queued' AND polled_at_ms IS NOT NULL")
        .run(iso(nowMs), ttlS, nowMs + ttlS * 1000, id).changes === 1;
    if (ok) this.changed(id);
    return ok;
  }

  /**
   * Records a heartbeat if the stored one is still `expected` (null: none yet); the first one
   * makes the item active. Returns the row after, or undefined when the precondition failed.
   */
  heartbeat(id: string, expected: string | null | undefined, nowMs: number, ttlS: number): WorkRow | undefined {
    const after = this.db
      .transaction(() => {
        const cur = this.get(id);
        if (!cur) return undefined;
        if (expected !== undefined && cur.latest_heartbeat_at !== expected) return undefined;
        // Each heartbeat gets a distinct value: a precondition on an equal one would not tell two beats apart.
        let at = nowMs;
        if (cur.latest_heartbeat_at && Date.parse(cur.latest_heartbeat_at) >= at) at = Date.parse(cur.latest_heartbeat_at) + 1;
        this.db
          .prepare("UPDATE work_items SET state = 'active', started_at = coalesce(started_at, ?), latest_heartbeat_at = ?, lease_ttl_s = ?, lease_expires_ms = ? WHERE id = ?")
          .run(iso(nowMs), iso(at), ttlS, nowMs + ttlS * 1000, id);
        return this.get(id);
      })
      .immediate();
    if (after) this.changed(id);
    return after;
  }

  /** Asks for a graceful stop (stopping) or ends the item (stopped). False when already stopped. */
  stop(id: string, force: boolean, reason: string, nowMs: number): boolean {
    const ok = this.stopRow(id, force, reason, nowMs);
    if (ok) this.changed(id);
    return ok;
  }

  private stopRow(id: string, force: boolean, reason: string, nowMs: number): boolean {
    const at = iso(nowMs);
    if (force) {
      return (
        this.db
          .prepare("UPDATE work_items SET state = 'stopped', stop_requested_at = coalesce(stop_requested_at, ?), stopped_at = ?, stop_reason = coalesce(stop_reason, ?), lease_expires_ms = NULL WHERE id = ? AND state != 'stopped'")
          .run(at, at, reason, id).changes === 1
      );
    }
    // A queued item nobody runs yet has nothing to shut down: it stops at once.
    return (
      this.db
        .prepare(
          "UPDATE work_items SET state = CASE WHEN state = 'queued' THEN 'stopped' ELSE 'stopping' END, stopped_at = CASE WHEN state = 'queued' THEN ? ELSE stopped_at END, stop_requested_at = coalesce(stop_requested_at, ?), stop_reason = coalesce(stop_reason, ?) WHERE id = ? AND state NOT IN ('stopped', 'stopping')",
        )
        .run(at, at, reason, id).changes === 1
    );
  }

  /** Items whose lease ran out (a worker that stopped heartbeating): they are stopped for good. */
  expireLeases(nowMs: number): WorkRow[] {
    const gone = this.db
      .transaction(() => {
        const rows = (this.db.prepare("SELECT * FROM work_items WHERE state IN ('starting', 'active', 'stopping') AND lease_expires_ms IS NOT NULL AND lease_expires_ms < ?").all(nowMs) as RawWork[]).map((r) => toRow(r)!);
        for (const r of rows) this.stopRow(r.id, true, 'lease_expired', nowMs);
        return rows.map((r) => this.get(r.id)!);
      })
      .immediate();
    // Told after the commit, so a listener never sees a change that could still roll back.
    for (const r of gone) this.changed(r.id);
    return gone;
  }

  setMetadata(id: string, metadata: Record<string, string>): WorkRow | undefined {
    this.db.prepare('UPDATE work_items SET metadata = ? WHERE id = ?').run(JSON.stringify(metadata), id);
    this.changed(id);
    return this.get(id);
  }

  /** A page of the environment's items, newest first. */
  list(environmentId: string, limit: number, page?: string): { data: WorkRow[]; next_page: string | null } {
    const after = page ? decodeCursor(page) : undefined;
    const rows = (
      after
        ? this.db.prepare('SELECT * FROM work_items WHERE environment_id = ? AND (created_at, id) < (?, ?) ORDER BY created_at DESC, id DESC LIMIT ?').all(environmentId, after.c, after.i, limit + 1)
        : this.db.prepare('SELECT * FROM work_items WHERE environment_id = ? ORDER BY created_at DESC, id DESC LIMIT ?').all(environmentId, limit + 1)
    ) as RawWork[];
    const data = rows.slice(0, limit).map((r) => toRow(r)!);
    const last = data.at(-1);
    return { data, next_page: rows.length > limit && last ? encodeCursor({ c: last.created_at, i: last.id, d: 'next' }) : null };
  }

  stats(environmentId: string, nowMs: number, recentMs: number): { depth: number; pending: number; oldest: string | null; workers: number } {
    const q = this.db
      .prepare(
        "SELECT sum(state = 'queued' AND polled_at_ms IS NULL) AS depth, sum(state = 'queued' AND polled_at_ms IS NOT NULL) AS pending, min(CASE WHEN state = 'queued' THEN created_at END) AS oldest FROM work_items WHERE environment_id = ?",
      )
      .get(environmentId) as { depth: number | null; pending: number | null; oldest: string | null };
    const w = this.db.prepare('SELECT count(*) AS n FROM worker_polls WHERE environment_id = ? AND last_poll_ms >= ?').get(environmentId, nowMs - recentMs) as { n: number };
    return { depth: q.depth ?? 0, pending: q.pending ?? 0, oldest: q.oldest, workers: w.n };
  }
}
