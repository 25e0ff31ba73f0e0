import { KINDS, type SessionIndex } from '../../lib/session-index';
import { setFilters, useView } from '../../state/view';

/** Kinds the compact view hides: the bookkeeping around the conversation and its tool calls. */
const COMPACT: readonly (typeof KINDS)[number][] = ['span', 'status', 'thinking'];

/** Filters shared by the list and its lanes: kinds, one hand, failures only, and text search. */
export function FilterBar({ index }: { index: SessionIndex }) {
  const f = useView((s) => s.filters);
  const compact = COMPACT.every((k) => f.hidden.includes(k));
  const toggle = (k: (typeof KINDS)[number]) => setFilters({ hidden: f.hidden.includes(k) ? f.hidden.filter((x) => x !== k) : [...f.hidden, k] });
  return (
    <div className="filter-bar" role="toolbar" aria-label="Filters">
      <input type="search" value={f.text} onChange={(e) => setFilters({ text: e.target.value })} placeholder="Search" aria-label="Search events" />
      <select value={f.hand ?? ''} onChange={(e) => setFilters({ hand: e.target.value || null })} aria-label="Only this hand">
        <option value="">All hands</option>
        {index.hands.lanes.map((l) => (
          <option key={l.name} value={l.name}>
            {l.name}
          </option>
        ))}
      </select>
      <label className="chip">
        <input type="checkbox" checked={compact} onChange={() => setFilters({ hidden: compact ? f.hidden.filter((k) => !COMPACT.includes(k)) : [...new Set([...f.hidden, ...COMPACT])] })} /> Compact
      </label>
      <label className="chip">
        <input type="checkbox" checked={f.failedOnly} onChange={(e) => setFilters({ failedOnly: e.target.checked })} title="Only failed calls and errors" /> Failed
      </label>
      <details className="kinds">
        <summary>Kinds{f.hidden.length ? ` (${f.hidden.length} hidden)` : ''}</summary>
        <div className="kind-list">
          {KINDS.map((k) => (
            <label key={k} className="chip">
              <input type="checkbox" checked={!f.hidden.includes(k)} onChange={() => toggle(k)} />
              <span className={`swatch kind-swatch-${k}`} aria-hidden="true" /> {k}
            </label>
          ))}
        </div>
      </details>
    </div>
  );
}
