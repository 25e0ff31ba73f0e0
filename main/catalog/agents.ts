import type { Database } from 'better-sqlite3';
import { newId } from '../db/ids';
import type { Page } from '../db/pagination';
import { getRecord, listRecords, type StoredRecord } from './records';

/** An agent's stored definition: the API's agent object minus the bookkeeping fields. */
export type AgentDefinition = Record<string, unknown>;

/** An agent at one version, with bookkeeping. */
export interface AgentRecord extends StoredRecord<AgentDefinition> {
  version: number;
}

/** Thrown when an update names a version that is no longer current. */
export class VersionConflictError extends Error {
  override readonly name = 'VersionConflictError';
}

/** Agents and every version of them (a session pins the version it started with). */
export class AgentStore {
  constructor(private readonly db: Database) {}

  create(definition: AgentDefinition): AgentRecord {
    const id = newId.agent();
    const now = new Date().toISOString();
    this.db.transaction(() => {
      this.db
        .prepare('INSERT INTO agents (id, version, created_at, updated_at, record) VALUES (?, 1, ?, ?, ?)')
        .run(id, now, now, JSON.stringify(definition));
      this.db.prepare('INSERT INTO agent_versions (agent_id, version, record) VALUES (?, 1, ?)').run(id, JSON.stringify(definition));
    })();
    return this.get(id)!;
  }

  /** The current version, or the given one. */
  get(id: string, version?: number): AgentRecord | undefined {
    const current = getRecord<AgentDefinition>(this.db, 'agents', id);
    if (!current) return undefined;
    const currentVersion = (this.db.prepare('SELECT version FROM agents WHERE id = ?').get(id) as { version: number }).version;
    if (version === undefined || version === currentVersion) return { ...current, version: currentVersion };
    const old = this.db.prepare('SELECT record FROM agent_versions WHERE agent_id = ? AND version = ?').get(id, version) as
      | { record: string }
      | undefined;
    return old ? { ...current, version, record: JSON.parse(old.record) as AgentDefinition } : undefined;
  }

  /**
   * Replaces the definition. A new version is made only when something changed; with
   * `expectedVersion`, the update fails if another one landed first.
   */
  update(id: string, change: (current: AgentDefinition) => AgentDefinition, expectedVersion?: number): AgentRecord {
    return this.db
      .transaction(() => {
        const current = this.get(id);
        if (!current) throw new Error(`no agent ${id}`);
        if (expectedVersion !== undefined && expectedVersion !== current.version) {
          throw new VersionConflictError(`agent ${id} is at version ${current.version}, not ${expectedVersion}`);
        }
        const next = change(current.record);
        if (JSON.stringify(next) === JSON.stringify(current.record)) return current;
        const version = current.version + 1;
        const now = new Date().toISOString();
        this.db.prepare('UPDATE agents SET version = ?, updated_at = ?, record = ? WHERE id = ?').run(version, now, JSON.stringify(next), id);
        this.db.prepare('INSERT INTO agent_versions (agent_id, version, record) VALUES (?, ?, ?)').run(id, version, JSON.stringify(next));
        return this.get(id)!;
      })
      .immediate();
  }

  archive(id: string): AgentRecord | undefined {
    const now = new Date().toISOString();
    this.db.prepare('UPDATE agents SET archived_at = coalesce(archived_at, ?), updated_at = ? WHERE id = ?').run(now, now, id);
    return this.get(id);
  }

  list(opts: Parameters<typeof listRecords>[2]): Page<AgentRecord> {
    const page = listRecords<AgentDefinition>(this.db, 'agents', opts);
    return { ...page, data: page.data.map((r) => this.get(r.id)!) };
  }

  /** All versions, newest first. */
  versions(id: string): AgentRecord[] {
    const rows = this.db.prepare('SELECT version FROM agent_versions WHERE agent_id = ? ORDER BY version DESC').all(id) as { version: number }[];
    return rows.map((r) => this.get(id, r.version)!);
  }
}
