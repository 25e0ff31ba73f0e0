import type { SessionSummary } from '../../../main/api/ui/contract';
import { useSessions } from '../state/sessions';
import { ErrorNote } from './ErrorNote';

interface Props {
  selected: string | null;
  onSelect(id: string): void;
}

/** The sessions, newest first, live. */
export function SessionList({ selected, onSelect }: Props) {
  const { sessions, loaded, error } = useSessions();
  return (
    <nav className="sidebar" aria-label="Sessions">
      <header className="sidebar-head">
        <span>Sessions</span>
        <span className="muted">{loaded ? sessions.length : '…'}</span>
      </header>
      {error && <ErrorNote error={error} />}
      <ul className="session-list" data-testid="session-list">
        {sessions.map((s) => (
          <SessionRow key={s.id} session={s} selected={s.id === selected} onSelect={onSelect} />
        ))}
      </ul>
      {loaded && sessions.length === 0 && !error && <p className="empty">No sessions yet.</p>}
    </nav>
  );
}

function SessionRow({ session, selected, onSelect }: { session: SessionSummary; selected: boolean; onSelect(id: string): void }) {
  return (
    <li>
      <button
        type="button"
        className={`session-row${selected ? ' selected' : ''}`}
        data-testid="session-row"
        data-session-id={session.id}
        data-status={session.status}
        aria-current={selected ? 'true' : undefined}
        onClick={() => onSelect(session.id)}
      >
        <span className="session-title">{session.title || session.id}</span>
        <span className="session-meta">
          <span className={`status status-${session.status}`}>{session.status}</span>
          <span className="muted">{session.agent_name ?? 'no agent'}</span>
        </span>
      </button>
    </li>
  );
}
