import { useState } from 'react';
import type { CorralApi, UiAgent } from '../../../../main/api/ui/contract';
import { loadCatalog, useCatalog } from '../../state/catalog';
import { AgentForm } from './AgentForm';

/** Agents: the list, and a form to make a new one or change one (each save is a new version). */
export function AgentsPage({ api }: { api: CorralApi }) {
  const agents = useCatalog((s) => s.agents);
  const [editing, setEditing] = useState<UiAgent | 'new' | null>(null);
  // The form is made afresh for the saved version: it says Saved. when it is the one just saved.
  const [savedKey, setSavedKey] = useState<string | null>(null);
  const formKey = editing === 'new' || editing === null ? 'new' : keyOf(editing);
  return (
    <section className="catalog-page" aria-labelledby="agents-title">
      <header className="page-head">
        <h2 id="agents-title">Agents</h2>
        <button type="button" className="primary" onClick={() => (setSavedKey(null), setEditing('new'))}>
          New agent
        </button>
      </header>
      <div className="catalog-body">
        <ul className="catalog-list" aria-label="Agents">
          {agents.map((a) => (
            <li key={a.id}>
              <button type="button" className={`catalog-row${editing !== 'new' && editing?.id === a.id ? ' selected' : ''}`} onClick={() => (setSavedKey(null), setEditing(a))} aria-label={`Edit agent ${a.name}`}>
                <strong>{a.name}</strong> <span className="muted">v{a.version} · {a.model.id}</span>
              </button>
            </li>
          ))}
          {agents.length === 0 && <li className="empty">No agents yet.</li>}
        </ul>
        {editing && (
          <AgentForm
            key={formKey}
            justSaved={savedKey === formKey}
            api={api}
            agent={editing === 'new' ? null : editing}
            onSaved={(a) => {
              void loadCatalog(api);
              setSavedKey(keyOf(a));
              setEditing(a);
            }}
          />
        )}
      </div>
    </section>
  );
}

const keyOf = (x: UiAgent) => `${x.id}@${x.version}`;
