import type { CorralApi, UiEvent } from '../../../../main/api/ui/contract';
import type { SessionIndex } from '../../lib/session-index';
import { setTab, useView, type PanelTab } from '../../state/view';
import { Inspector } from './Inspector';
import { SlicePanel } from './SlicePanel';
import { StatePanel } from './StatePanel';
import { SessionWorkers } from '../workers/SessionWorkers';

const TABS: { id: PanelTab; label: string }[] = [
  { id: 'state', label: 'State' },
  { id: 'event', label: 'Event' },
  { id: 'slice', label: 'Slice' },
];

/** The right-hand panel: the session's state at the cursor, the inspected event, or the slice. */
export function SidePanel({ api, sessionId, events, index, onFork }: { api: CorralApi; sessionId: string; events: readonly UiEvent[]; index: SessionIndex; onFork(seq: number): void }) {
  const tab = useView((s) => s.tab);
  return (
    <aside className="side-panel" aria-label="Details">
      <div role="tablist" aria-label="Details" className="tabs">
        {TABS.map((t) => (
          <button key={t.id} type="button" role="tab" id={`tab-${t.id}`} aria-selected={tab === t.id} aria-controls={`panel-${t.id}`} onClick={() => setTab(t.id)}>
            {t.label}
          </button>
        ))}
      </div>
      <div role="tabpanel" id={`panel-${tab}`} aria-labelledby={`tab-${tab}`} className="tab-body">
        {tab === 'state' && <StatePanel events={events} index={index} />}
        {tab === 'state' && <SessionWorkers api={api} sessionId={sessionId} />}
        {tab === 'event' && <Inspector api={api} sessionId={sessionId} events={events} index={index} onFork={onFork} />}
        {tab === 'slice' && <SlicePanel api={api} sessionId={sessionId} events={events} />}
      </div>
    </aside>
  );
}
