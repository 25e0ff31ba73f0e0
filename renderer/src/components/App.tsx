import { useEffect, useState } from 'react';
import type { Transport } from '../api/transport';
import { useConnection } from '../state/connection';
import { followSessions } from '../state/sessions';
import { sessionFromUrl, writeSessionToUrl } from '../state/url';
import { AuthRequired } from './AuthRequired';
import { ConnectionBanner } from './ConnectionBanner';
import { SessionList } from './SessionList';
import { SessionView } from './SessionView';

/** The whole window: sessions on the left, the selected session on the right. */
export function App({ transport }: { transport: Transport }) {
  const status = useConnection((s) => s.status);
  const [selected, setSelected] = useState<string | null>(sessionFromUrl);

  useEffect(() => followSessions(transport), [transport]);
  useEffect(() => writeSessionToUrl(selected), [selected]);

  if (status === 'unauthorised') return <AuthRequired />;
  return (
    <div className="app">
      <ConnectionBanner status={status} />
      <div className="panes">
        <SessionList selected={selected} onSelect={setSelected} />
        {selected ? (
          <SessionView key={selected} api={transport.api} sessionId={selected} />
        ) : (
          <section className="session-view placeholder">
            <p className="empty">Select a session.</p>
          </section>
        )}
      </div>
    </div>
  );
}
