import type { Database } from 'better-sqlite3';
import { listPage, type Page } from '../db/pagination';

/** A stored definition (agent or environment): the API-shaped record plus bookkeeping. */
export interface StoredRecord<T> {
  id: string;
  created_at: string;
  updated_at: string;
  archived_at: string | null;
  record: T;
}

interface Row {
  id: string;
  created_at: string;
  updated_at: string;
  archived_at: string | null;
  record: string;
}

const parse = <T>(row: Row): StoredRecord<T> => ({ ...row, record: JSON.parse(row.record) as T });

/** Lists a definitions table newest first, optionally with archived rows and created_at bounds. */
export function listRecords<T>(
  db: Database,
  table: 'agents' | 'environments',
  opts: { limit: number; page?: string | null; includeArchived?: boolean; createdGte?: string; createdLte?: string },
): Page<StoredRecord<T>> {
  const where: string[] = [];
  const params: unknown[] = [];
  if (!opts.includeArchived) where.push('archived_at IS NULL');
  if (opts.createdGte) where.push('created_at >= ?'), params.push(opts.createdGte);
  if (opts.createdLte) where.push('created_at <= ?'), params.push(opts.createdLte);
  const page = listPage<Row>(db, { table, where, params, limit: opts.limit, order: 'desc', page: opts.page });
  return { ...page, data: page.data.map((r) => parse<T>(r)) };
}

export function getRecord<T>(db: Database, table: 'agents' | 'environments', id: string): StoredRecord<T> | undefined {
  const row = db.prepare(`SELECT id, created_at, updated_at, archived_at, record FROM ${table} WHERE id = ?`).get(id) as Row | undefined;
  return row ? parse<T>(row) : undefined;
}
