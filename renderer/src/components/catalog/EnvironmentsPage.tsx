import { useState } from 'react';
import type { CorralApi, UiEnvironment, UiHandPool } from '../../../../main/api/ui/contract';
import { loadCatalog, useCatalog } from '../../state/catalog';
import { EnvironmentForm } from './EnvironmentForm';
import { WorkerKeyPanel } from './WorkerKeyPanel';
import { useHandPools } from './useHandPools';

/** An environment's warm pool of hands made ahead, as the host last pushed it (useHandPools). */
function PoolNote({ pool }: { pool: UiHandPool }) {
  const parts = [`warm pool ${pool.ready}/${pool.size} ready`, pool.provisioning ? `${pool.provisioning} being made` : '', `${pool.taken} taken`, pool.failures ? `${pool.failures} failed` : ''];
  return (
    <span className="muted pool-note" title={pool.last_error ?? `hands made ahead for this environment's sessions; ${pool.misses} sessions found none that fitted`}>
      {' '}
      · {parts.filter(Boolean).join(', ')}
    </span>
  );
}

/** Environments: where hands come from (this machine, an SSH host, a container image, a device). */
export function EnvironmentsPage({ api }: { api: CorralApi }) {
  const environments = useCatalog((s) => s.environments);
  const pools = useHandPools(api);
  const [editing, setEditing] = useState<UiEnvironment | 'new' | null>(null);
  // The form is made afresh for the saved version: it says Saved. when it is the one just saved.
  const [savedKey, setSavedKey] = useState<string | null>(null);
  const formKey = editing === 'new' || editing === null ? 'new' : keyOf(editing);
  return (
    <section className="catalog-page" aria-labelledby="envs-title">
      <header className="page-head">
        <h2 id="envs-title">Environments</h2>
        <button type="button" className="primary" onClick={() => (setSavedKey(null), setEditing('new'))}>
          New environment
        </button>
      </header>
      <div className="catalog-body">
        <ul className="catalog-list" aria-label="Environments">
          {environments.map((e) => (
            <li key={e.id}>
              <button type="button" className={`catalog-row${editing !== 'new' && editing?.id === e.id ? ' selected' : ''}`} onClick={() => (setSavedKey(null), setEditing(e))} aria-label={`Edit environment ${e.name}`}>
                <strong>{e.name}</strong> <span className="muted">{e.config.type}</span>
                {(pools.get(e.id) ?? e.corral_pool) && <PoolNote pool={(pools.get(e.id) ?? e.corral_pool)!} />}
              </button>
            </li>
          ))}
          {environments.length === 0 && <li className="empty">No environments yet.</li>}
        </ul>
        {editing && (
          <EnvironmentForm
            key={formKey}
            justSaved={savedKey === formKey}
            api={api}
            environment={editing === 'new' ? null : editing}
            onSaved={(e) => {
              void loadCatalog(api);
              setSavedKey(keyOf(e));
              setEditing(e);
            }}
          />
        )}
        {editing && editing !== 'new' && editing.config.type === 'self_hosted' && <WorkerKeyPanel key={editing.id} api={api} environment={editing} />}
      </div>
    </section>
  );
}

const keyOf = (x: UiEnvironment) => `${x.id}@${x.updated_at}`;
