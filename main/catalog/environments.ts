import type { Database } from 'better-sqlite3';
import { newId } from '../db/ids';
import type { Page } from '../db/pagination';
import { getRecord, listRecords, type StoredRecord } from './records';

/** An environment's stored definition (name, description, metadata, config). */
export type EnvironmentDefinition = Record<string, unknown>;
export type EnvironmentRecord = StoredRecord<EnvironmentDefinition>;

/** Environments: where a session's hands come from. Hands themselves come later. */
export class EnvironmentStore {
  constructor(private readonly db: Database) {}

  create(definition: EnvironmentDefinition): EnvironmentRecord {
    const id = newId.environment();
    const now = new Date().toISOString();
    this.db.prepare('INSERT INTO environments (id, created_at, updated_at, record) VALUES (?, ?, ?, ?)').run(id, now, now, JSON.stringify(definition));
    return this.get(id)!;
  }

  get(id: string): EnvironmentRecord | undefined {
    return getRecord<EnvironmentDefinition>(this.db, 'environments', id);
  }

  update(id: string, change: (current: EnvironmentDefinition) => EnvironmentDefinition): EnvironmentRecord | undefined {
    return this.db
      .transaction(() => {
        const current = this.get(id);
        if (!current) return undefined;
        const next = change(current.record);
        this.db.prepare('UPDATE environments SET record = ?, updated_at = ? WHERE id = ?').run(JSON.stringify(next), new Date().toISOString(), id);
        return this.get(id);
      })
      .immediate();
  }

  archive(id: string): EnvironmentRecord | undefined {
    const now = new Date().toISOString();
    this.db.prepare('UPDATE environments SET archived_at = coalesce(archived_at, ?), updated_at = ? WHERE id = ?').run(now, now, id);
    return this.get(id);
  }

  /** Removes the environment. Sessions keep their `environment_id` as a record of what was used. */
  delete(id: string): boolean {
    return this.db.prepare('DELETE FROM environments WHERE id = ?').run(id).changes > 0;
  }

  list(opts: Parameters<typeof listRecords>[2]): Page<EnvironmentRecord> {
    return listRecords<EnvironmentDefinition>(this.db, 'environments', opts);
  }
}
