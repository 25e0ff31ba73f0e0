import { useState } from 'react';
import type { SessionSummary } from '../../../main/api/ui/contract';
import { useSessions } from '../state/sessions';
import type { UrlState } from '../state/url';
import { ago } from '../lib/time';
import { ErrorNote } from './ErrorNote';

interface Props {
  view: UrlState['view'];
  onView(v: UrlState['view']): void;
  selected: string | null;
  onSelect(id: string): void;
  onNew(): void;
}

const VIEWS: { id: UrlState['view']; label: string }[] = [
  { id: 'sessions', label: 'Sessions' },
  { id: 'agents', label: 'Agents' },
  { id: 'environments', label: 'Environments' },
  { id: 'vaults', label: 'Vaults' },
  { id: 'hands', label: 'Hands' },
];

/** The sidebar: the page switch, and the sessions (newest first, live, filterable). */
export function SessionList({ view, onView, selected, onSelect, onNew }: Props) {
  const { sessions, loaded, error } = useSessions();
  const [text, setText] = useState('');
  const [status, setStatus] = useState('');
  const q = text.trim().toLowerCase();
  const shown = sessions.filter(
    (s) =>
      (!status || s.status === status) &&
      (!q || [s.title, s.id, s.agent_name, ...(s.hands ?? []).map((h) => `${h.name} ${h.kind}`)].some((v) => v?.toLowerCase().includes(q))),
  );
  return (
    <nav className="sidebar" aria-label="Sessions">
      <div className="views" role="tablist" aria-label="Pages">
        {VIEWS.map((v) => (
          <button key={v.id} type="button" role="tab" aria-selected={view === v.id} onClick={() => onView(v.id)}>
            {v.label}
          </button>
        ))}
      </div>
      <header className="sidebar-head">
        <button type="button" className="primary" onClick={onNew} data-testid="new-session">
          New session
        </button>
        <span className="muted">{loaded ? `${shown.length}/${sessions.length}` : '…'}</span>
      </header>
      <div className="session-filters">
        <input type="search" value={text} onChange={(e) => setText(e.target.value)} placeholder="Filter sessions" aria-label="Filter sessions" />
        <select value={status} onChange={(e) => setStatus(e.target.value)} aria-label="Status filter">
          <option value="">Any status</option>
          <option value="running">running</option>
          <option value="idle">idle</option>
          <option value="rescheduling">rescheduling</option>
          <option value="terminated">terminated</option>
        </select>
      </div>
      {error && <ErrorNote error={error} />}
      <ul className="session-list" data-testid="session-list">
        {shown.map((s) => (
          <SessionRow key={s.id} session={s} selected={s.id === selected} onSelect={onSelect} />
        ))}
      </ul>
      {loaded && sessions.length === 0 && !error && <p className="empty">No sessions yet.</p>}
    </nav>
  );
}

const tokens = (s: SessionSummary) => s.usage.input_tokens + s.usage.output_tokens + s.usage.cache_read_input_tokens + s.usage.cache_creation_input_tokens;

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
        <span className="session-title">
          {session.parent_id && <span aria-label="fork">↳ </span>}
          {session.title || session.id}
        </span>
        <span className="session-meta">
          <span className={`status status-${session.status}`}>{session.status}</span>
          {session.waiting_for_user && (
            <span className="badge waiting-badge" data-testid="waiting-badge" title="Tool calls wait for your confirmation">
              waiting for you
            </span>
          )}
          <span className="muted">{session.agent_name ?? 'no agent'}</span>
          <span className="muted" title={session.updated_at}>
            {ago(session.updated_at)}
          </span>
        </span>
        <span className="session-meta">
          <span className="muted">{(session.hands ?? []).map((h) => `${h.name}·${h.kind}`).join(' ') || '–'}</span>
          <span className="muted">{tokens(session).toLocaleString('en-US')} tok</span>
        </span>
      </button>
    </li>
  );
}
