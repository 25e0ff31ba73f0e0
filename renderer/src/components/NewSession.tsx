import { useState, type FormEvent } from 'react';
import type { CorralApi } from '../../../main/api/ui/contract';
import { toClientError, type ClientError } from '../api/errors';
import { useCatalog } from '../state/catalog';
import { ErrorNote } from './ErrorNote';
import { HandRows, type HandRow } from './HandRows';

/**
 * What the form holds, kept while the window lives: leaving the form (to make the agent or
 * environment it lacks, say) and coming back finds it as it was. Starting or cancelling clears it.
 */
interface Draft {
  agentId: string;
  envId: string;
  hands: HandRow[];
  title: string;
  message: string;
}
const empty: Draft = { agentId: '', envId: '', hands: [], title: '', message: '' };
let draft: Draft = { ...empty };
const clearDraft = () => {
  draft = { ...empty };
};
function useDraft<K extends keyof Draft>(key: K): [Draft[K], (v: Draft[K]) => void] {
  const [value, setValue] = useState<Draft[K]>(() => draft[key]);
  return [
    value,
    (v) => {
      draft = { ...draft, [key]: v };
      setValue(v);
    },
  ];
}

/** Starts work: an agent, the environment its main hand comes from, more hands, a title and a first message. */
export function NewSession({ api, onCreated, onCancel }: { api: CorralApi; onCreated(id: string): void; onCancel(): void }) {
  const allAgents = useCatalog((s) => s.agents);
  const allEnvironments = useCatalog((s) => s.environments);
  const agents = allAgents.filter((a) => !a.archived_at);
  const environments = allEnvironments.filter((e) => !e.archived_at);
  const [agentId, setAgentId] = useDraft('agentId');
  const [envId, setEnvId] = useDraft('envId');
  const [hands, setHands] = useDraft('hands');
  const [title, setTitle] = useDraft('title');
  const [message, setMessage] = useDraft('message');
  const [error, setError] = useState<ClientError | null>(null);
  const [busy, setBusy] = useState(false);
  const agent = agentId || agents[0]?.id || '';
  const env = envId || environments[0]?.id || '';

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const s = await api.createSession({
        session: {
          agent,
          environment_id: env,
          ...(title.trim() ? { title: title.trim() } : {}),
          ...(message.trim() ? { initial_events: [{ type: 'user.message' as const, content: [{ type: 'text' as const, text: message }] }] } : {}),
        },
        ...(hands.length ? { hands: hands.map((h) => ({ environment_id: h.environmentId, name: h.name })) } : {}),
      });
      clearDraft();
      onCreated(s.id);
    } catch (err) {
      setError(toClientError(err));
      setBusy(false);
    }
  };
  return (
    <section className="catalog-page" aria-labelledby="new-session-title">
      <form className="catalog-form wide" onSubmit={(e) => void submit(e)} data-testid="new-session-form">
        <h2 id="new-session-title">New session</h2>
        {(agents.length === 0 || environments.length === 0) && <p className="warn">Make an agent and an environment first (the pages in the sidebar).</p>}
        <label className="field">
          <span>Agent</span>
          <select value={agent} onChange={(e) => setAgentId(e.target.value)} required>
            {agents.map((a) => (
              <option key={a.id} value={a.id}>
                {a.name} (v{a.version}, {a.model.id})
              </option>
            ))}
          </select>
        </label>
        <label className="field">
          <span>Environment (main hand)</span>
          <select value={env} onChange={(e) => setEnvId(e.target.value)} required>
            {environments.map((x) => (
              <option key={x.id} value={x.id}>
                {x.name} ({x.config.type})
              </option>
            ))}
          </select>
        </label>
        <HandRows environments={environments} rows={hands} onChange={setHands} />
        <label className="field">
          <span>Title</span>
          <input value={title} onChange={(e) => setTitle(e.target.value)} />
        </label>
        <label className="field">
          <span>First message</span>
          <textarea value={message} onChange={(e) => setMessage(e.target.value)} rows={4} />
        </label>
        {error && <ErrorNote error={error} />}
        <div className="form-actions">
          <button
            type="button"
            onClick={() => {
              clearDraft();
              onCancel();
            }}
          >
            Cancel
          </button>
          <button type="submit" className="primary" disabled={busy || !agent || !env}>
            {busy ? 'Starting…' : 'Start session'}
          </button>
        </div>
      </form>
    </section>
  );
}
