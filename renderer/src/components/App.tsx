import { useCallback, useEffect, useState } from 'react';
import type { Transport } from '../api/transport';
import { loadCatalog } from '../state/catalog';
import { useConnection } from '../state/connection';
import { followSessions } from '../state/sessions';
import { readUrl, writeUrl, type UrlState } from '../state/url';
import { AuthRequired } from './AuthRequired';
import { AgentsPage } from './catalog/AgentsPage';
import { EnvironmentsPage } from './catalog/EnvironmentsPage';
import { VaultsPage } from './vault/VaultsPage';
import { HandsPage } from './hands/HandsPage';
import { ConnectionBanner } from './ConnectionBanner';
import { NewSession } from './NewSession';
import { SessionList } from './SessionList';
import { SessionView } from './session/SessionView';

/** The whole window: the sidebar (sessions, agents, environments) and the page it selects. */
export function App({ transport }: { transport: Transport }) {
  const status = useConnection((s) => s.status);
  const [view, setView] = useState<UrlState['view']>(() => readUrl().view);
  const [selected, setSelected] = useState<string | null>(() => readUrl().session);
  const [creating, setCreating] = useState(false);
  const api = transport.api;

  useEffect(() => followSessions(transport), [transport]);
  useEffect(() => transport.onOpen(() => void loadCatalog(api)), [transport, api]);

  const select = useCallback((id: string, at?: number) => {
    writeUrl({ session: id, at: at === undefined ? null : String(at), slice: null, view: null });
    setCreating(false);
    setView('sessions');
    setSelected(id);
  }, []);
  const show = (v: UrlState['view']) => {
    writeUrl({ view: v === 'sessions' ? null : v });
    setView(v);
  };

  if (status === 'unauthorised') return <AuthRequired />;
  return (
    <div className="app">
      <ConnectionBanner status={status} />
      <div className="panes">
        <SessionList view={view} onView={show} selected={selected} onSelect={select} onNew={() => (setCreating(true), show('sessions'))} />
        <main className="main-pane">
          {view === 'agents' ? (
            <AgentsPage api={api} />
          ) : view === 'environments' ? (
            <EnvironmentsPage api={api} />
          ) : view === 'vaults' ? (
            <VaultsPage api={api} />
          ) : view === 'hands' ? (
            <HandsPage api={api} />
          ) : creating ? (
            <NewSession api={api} onCreated={(id) => select(id)} onCancel={() => setCreating(false)} />
          ) : selected ? (
            <SessionView key={selected} api={api} sessionId={selected} onSelect={select} />
          ) : (
            <section className="session-view placeholder">
              <p className="empty">Select a session, or start a new one.</p>
            </section>
          )}
        </main>
      </div>
    </div>
  );
}
