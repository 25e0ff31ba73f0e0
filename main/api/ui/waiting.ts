import type { SessionLog } from '../../session/store';
import type { SessionRow } from '../../session/types';

/**
 * True when the session is idle waiting for the user: its last idle stopped with
 * `requires_action` (tool calls held for confirmation, or custom tool calls for the client).
 * Reads one event, the newest `session.status_idle`.
 */
export function waitingForUser(log: Pick<SessionLog, 'getEvents'>, row: SessionRow): boolean {
  if (row.status !== 'idle') return false;
  const [idle] = log.getEvents(row.id, { types: ['session.status_idle'], order: 'desc', limit: 1 });
  return (idle?.stop_reason as { type?: unknown } | undefined)?.type === 'requires_action';
}
