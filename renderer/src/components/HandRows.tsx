import type { UiEnvironment } from '../../../main/api/ui/contract';

/** A hand to attach: an environment and the name the session calls it. */
export interface HandRow {
  environmentId: string;
  name: string;
}

/** Rows of extra hands (environment + name), with add and remove; used by New session and Fork. */
export function HandRows({ environments, rows, onChange }: { environments: readonly UiEnvironment[]; rows: HandRow[]; onChange(rows: HandRow[]): void }) {
  const set = (k: number, row: Partial<HandRow>) => onChange(rows.map((r, j) => (j === k ? { ...r, ...row } : r)));
  return (
    <fieldset className="hand-rows">
      <legend>More hands</legend>
      {rows.map((r, k) => (
        <div key={k} className="hand-row">
          <select value={r.environmentId} onChange={(e) => set(k, { environmentId: e.target.value })} aria-label={`Environment of extra hand ${k + 1}`}>
            {environments.map((e) => (
              <option key={e.id} value={e.id}>
                {e.name} ({e.config.type})
              </option>
            ))}
          </select>
          <input value={r.name} onChange={(e) => set(k, { name: e.target.value })} aria-label={`Name of extra hand ${k + 1}`} placeholder="name" />
          <button type="button" className="link" onClick={() => onChange(rows.filter((_, j) => j !== k))} aria-label={`Remove extra hand ${k + 1}`}>
            ✕
          </button>
        </div>
      ))}
      <button
        type="button"
        className="link"
        disabled={environments.length === 0}
        onClick={() => onChange([...rows, { environmentId: environments[0]?.id ?? '', name: `hand${rows.length + 2}` }])}
      >
        + Add a hand
      </button>
    </fieldset>
  );
}
