import type { Database } from 'better-sqlite3';

/** Thrown for a page token this server did not make. */
export class BadCursorError extends Error {
  override readonly name = 'BadCursorError';
}

interface Position {
  c: string; // created_at
  i: string; // id
  d: 'next' | 'prev';
}

export function encodeCursor(pos: Position): string {
  return Buffer.from(JSON.stringify(pos)).toString('base64url');
}

export function decodeCursor(token: string): Position {
  try {
    const pos = JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as Position;
    if (typeof pos.c === 'string' && typeof pos.i === 'string' && (pos.d === 'next' || pos.d === 'prev')) return pos;
  } catch {
    // fall through
  }
  throw new BadCursorError(`'${token.slice(0, 40)}' is not a page token from this server`);
}

/** One page of a keyset listing, newest-first by default. */
export interface Page<T> {
  data: T[];
  next_page: string | null;
  prev_page: string | null;
}

export interface ListQuery {
  table: string;
  /** Extra SQL conditions (ANDed) and their parameters. */
  where: string[];
  params: unknown[];
  limit: number;
  order: 'asc' | 'desc';
  page?: string | null;
}

/**
 * Lists rows of a table with `created_at` and `id` columns by keyset pagination: stable under
 * inserts, and a page token is just the position of the last (or first) row shown.
 */
export function listPage<Row extends { created_at: string; id: string }>(db: Database, q: ListQuery): Page<Row> {
  const pos = q.page ? decodeCursor(q.page) : undefined;
  const forward = !pos || pos.d === 'next';
  // Walking backwards means scanning in the opposite order, then flipping the page.
  const scanDesc = (q.order === 'desc') === forward;
  const where = [...q.where];
  const params = [...q.params];
  if (pos) {
    where.push(scanDesc ? '(created_at < ? OR (created_at = ? AND id < ?))' : '(created_at > ? OR (created_at = ? AND id > ?))');
    params.push(pos.c, pos.c, pos.i);
  }
  const sql =
    `SELECT * FROM ${q.table}` +
    (where.length ? ` WHERE ${where.join(' AND ')}` : '') +
    ` ORDER BY created_at ${scanDesc ? 'DESC' : 'ASC'}, id ${scanDesc ? 'DESC' : 'ASC'} LIMIT ?`;
  const rows = db.prepare(sql).all(...params, q.limit + 1) as Row[];
  const more = rows.length > q.limit;
  if (more) rows.pop();
  if (!forward) rows.reverse();
  const first = rows[0];
  const last = rows[rows.length - 1];
  const hasNext = forward ? more : pos !== undefined;
  const hasPrev = forward ? pos !== undefined : more;
  return {
    data: rows,
    next_page: hasNext && last ? encodeCursor({ c: last.created_at, i: last.id, d: 'next' }) : null,
    prev_page: hasPrev && first ? encodeCursor({ c: first.created_at, i: first.id, d: 'prev' }) : null,
  };
}
