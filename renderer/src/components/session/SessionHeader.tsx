import type { SessionSummary } from '../../../../main/api/ui/contract';
import type { SessionIndex } from '../../lib/session-index';
import { useSessions } from '../../state/sessions';

interface Props {
  session: SessionSummary | undefined;
  sessionId: string;
  forks: readonly SessionSummary[];
  index: SessionIndex;
  onSelect(id: string, at?: number): void;
}

const fmt = (n: number) => n.toLocaleString('en-US');

/** Title, status, agent, hands and tokens; where it was forked from and what was forked from it (both navigable). */
export function SessionHeader({ session, sessionId, forks, onSelect }: Props) {
  const parent = useSessions((s) => (session?.parent_id ? s.sessions.find((x) => x.id === session.parent_id) : undefined));
  return (
    <header className="session-head" data-testid="session-head">
      <div className="head-line">
        <h2>{session?.title || sessionId}</h2>
        {session && (
          <span className="session-meta">
            <span className={`status status-${session.status}`} data-testid="session-status">
              {session.status}
            </span>
            <span className="muted">{session.agent_name ?? 'no agent'}</span>
            {session.hands && <span className="muted">hands: {session.hands.map((h) => `${h.name} (${h.kind})`).join(', ')}</span>}
            <span className="muted">
              {fmt(session.usage.input_tokens)} in · {fmt(session.usage.output_tokens)} out
            </span>
          </span>
        )}
      </div>
      {(session?.parent_id || forks.length > 0) && (
        <nav className="ancestry" aria-label="Ancestry" data-testid="ancestry">
          {session?.parent_id && (
            <span>
              Forked from{' '}
              <button type="button" className="link" onClick={() => onSelect(session.parent_id!, session.fork_seq ?? undefined)} data-testid="parent-link">
                {parent?.title || session.parent_id}
              </button>{' '}
              at #{session.fork_seq}
            </span>
          )}
          {forks.length > 0 && (
            <span>
              Forks:{' '}
              {forks.map((f) => (
                <button key={f.id} type="button" className="link" onClick={() => onSelect(f.id, f.fork_seq ?? undefined)} data-testid="fork-link">
                  {f.title || f.id} (#{f.fork_seq})
                </button>
              ))}
            </span>
          )}
        </nav>
      )}
    </header>
  );
}
