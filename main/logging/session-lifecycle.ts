import { statusOf } from '../session/derived';
import type { SessionLog } from '../session/store';
import type { Logger } from './logger';

/**
 * Logs each session's lifecycle from the session log itself: created (or forked), each change of
 * status (with the stop reason's type), errors (their type only: a message can quote the model
 * or a tool) and deletion. Returns the unsubscribe.
 */
export function logSessionLifecycle(log: SessionLog, logger: Logger): () => void {
  const lastStatus = new Map<string, string>();
  const stopSessions = log.subscribeSessions((change) => {
    if (change.kind === 'created') {
      const s = log.findSession(change.sessionId);
      logger.info(
        { session_id: change.sessionId, agent_id: s?.agent_id ?? null, environment_id: s?.environment_id ?? null, ...(s?.parent_id ? { forked_from: s.parent_id, at_seq: s.fork_seq } : {}) },
        s?.parent_id ? 'session forked' : 'session created',
      );
    } else if (change.kind === 'deleted') {
      lastStatus.delete(change.sessionId);
      logger.info({ session_id: change.sessionId }, 'session deleted');
    }
  });
  const stopEvents = log.subscribeAll(({ sessionId, event }) => {
    if (!event.type.startsWith('session.')) return;
    if (event.type === 'session.error') {
      const error = event.error as { type?: unknown } | undefined;
      logger.warn({ session_id: sessionId, seq: event.seq, error_type: String(error?.type ?? 'unknown') }, 'session error');
      return;
    }
    const status = statusOf(event.type);
    if (!status || lastStatus.get(sessionId) === status) return;
    lastStatus.set(sessionId, status);
    const stop = (event.stop_reason as { type?: unknown } | undefined)?.type;
    logger.info({ session_id: sessionId, seq: event.seq, status, ...(stop ? { stop_reason: String(stop) } : {}) }, 'session status');
  });
  return () => {
    stopSessions();
    stopEvents();
  };
}
