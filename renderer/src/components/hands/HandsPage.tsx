import type { CorralApi } from '../../../../main/api/ui/contract';
import { useCatalog } from '../../state/catalog';
import { emptyDraft, useHandsPanel } from '../../state/hands-panel';
import { useSessions } from '../../state/sessions';
import { AttachForm } from './AttachForm';
import { DiscoveryList } from './DiscoveryList';
import { FileDrop } from './FileDrop';
import { MachineList } from './MachineList';
import { SessionTargets } from './SessionTargets';
import { DialInList } from '../workers/DialInList';

/**
 * The hands panel: attached machines (drag one onto a session), the sessions with their hands
 * (drag a hand to another session to hand it over), what this machine offers, and the form a
 * dropped key or ssh config opens. Every drop is checked again by the host.
 */
export function HandsPage({ api }: { api: CorralApi }) {
  const environments = useCatalog((s) => s.environments);
  const sessions = useSessions((s) => s.sessions).filter((s) => !s.archived_at);
  const notice = useHandsPanel((s) => s.notice);
  const draft = useHandsPanel((s) => s.draft);
  return (
    <section className="catalog-page hands-page" aria-labelledby="hands-title">
      <header className="page-head">
        <h2 id="hands-title">Hands</h2>
        <FileDrop api={api} />
        {!draft && (
          <button type="button" onClick={() => useHandsPanel.setState({ draft: emptyDraft(), probe: null })}>
            New SSH host…
          </button>
        )}
      </header>
      {notice && (
        <div className={notice.kind === 'error' ? 'error-note' : 'ok-note'} role={notice.kind === 'error' ? 'alert' : 'status'} data-testid="hands-notice" data-kind={notice.kind}>
          {notice.text}
          <button type="button" className="link" aria-label="Dismiss" onClick={() => useHandsPanel.setState({ notice: null })}>
            ✕
          </button>
        </div>
      )}
      <div className="hands-body">
        <div className="hands-left">
          <MachineList api={api} environments={environments} sessions={sessions} />
          <DialInList api={api} environments={environments} />
          <DiscoveryList api={api} />
        </div>
        <SessionTargets api={api} sessions={sessions} />
        {draft && <AttachForm api={api} />}
      </div>
    </section>
  );
}
