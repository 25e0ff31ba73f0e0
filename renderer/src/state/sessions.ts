import { create } from 'zustand';
import type { SessionListChange, SessionSummary } from '../../../main/api/ui/contract';
import { toClientError, type ClientError } from '../api/errors';
import type { Transport } from '../api/transport';

/** The session list, kept live by watchSessions. Newest first. */
export interface SessionsState {
  sessions: readonly SessionSummary[];
  loaded: boolean;
  error: ClientError | null;
}

export const useSessions = create<SessionsState>(() => ({ sessions: [], loaded: false, error: null }));

const newestFirst = (a: SessionSummary, b: SessionSummary) =>
  a.created_at === b.created_at ? (a.id < b.id ? 1 : -1) : a.created_at < b.created_at ? 1 : -1;

function applyChange(change: SessionListChange): void {
  useSessions.setState((state) => {
    const rest = state.sessions.filter((s) => s.id !== change.sessionId);
    if (change.kind === 'deleted' || !change.session) return { sessions: rest };
    return { sessions: [...rest, change.session].sort(newestFirst) };
  });
}

/**
 * Starts following the session list: the stream first, then a full listing on every
 * (re)connection, so changes missed while disconnected are caught up. Returns a stop function.
 */
export function followSessions(transport: Transport): () => void {
  const stopWatch = transport.api.watchSessions({}, applyChange, (error) => useSessions.setState({ error: toClientError(error) }));
  const stopOpen = transport.onOpen(() => {
    transport.api.listSessions({ limit: 1000 }).then(
      (sessions) => useSessions.setState({ sessions: [...sessions].sort(newestFirst), loaded: true, error: null }),
      (err: unknown) => useSessions.setState({ error: toClientError(err), loaded: true }),
    );
  });
  return () => {
    stopWatch();
    stopOpen();
  };
}
