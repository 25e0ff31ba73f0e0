import type { Database } from 'better-sqlite3';
import { listPage, type Page } from '../db/pagination';
import type { SessionStatus } from './types';

/** Filters of the session list (the Managed Agents list parameters Corral supports). */
export interface SessionListQuery {
  limit: number;
  page?: string | null;
  order?: 'asc' | 'desc';
  includeArchived?: boolean;
  agentId?: string;
  agentVersion?: number;
  /** Only sessions forked from this one. */
  parentId?: string;
  statuses?: readonly SessionStatus[];
  createdGt?: string;
  createdGte?: string;
  createdLt?: string;
  createdLte?: string;
}

/** One page of session ids, newest first unless `order` says otherwise. */
export function listSessionIds(db: Database, q: SessionListQuery): Page<string> {
  const where = ['deleted_at IS NULL'];
  const params: unknown[] = [];
  const add = (sql: string, value: unknown) => {
    where.push(sql);
    params.push(value);
  };
  if (!q.includeArchived) where.push('archived_at IS NULL');
  if (q.agentId !== undefined) add('agent_id = ?', q.agentId);
  if (q.agentVersion !== undefined) add('agent_version = ?', q.agentVersion);
  if (q.parentId !== undefined) add('parent_id = ?', q.parentId);
  if (q.statuses && q.statuses.length > 0) add('status IN (SELECT value FROM json_each(?))', JSON.stringify(q.statuses));
  if (q.createdGt) add('created_at > ?', q.createdGt);
  if (q.createdGte) add('created_at >= ?', q.createdGte);
  if (q.createdLt) add('created_at < ?', q.createdLt);
  if (q.createdLte) add('created_at <= ?', q.createdLte);
  const page = listPage<{ id: string; created_at: string }>(db, {
    table: 'sessions',
    where,
    params,
    limit: q.limit,
    order: q.order ?? 'desc',
    page: q.page,
  });
  return { ...page, data: page.data.map((r) => r.id) };
}
