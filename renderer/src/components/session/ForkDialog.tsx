import { useEffect, useRef, useState } from 'react';
import type { CorralApi, ForkPreview, SessionSummary } from '../../../../main/api/ui/contract';
import { toClientError, type ClientError } from '../../api/errors';
import { useCatalog } from '../../state/catalog';
import { ErrorNote } from '../ErrorNote';
import { HandRows, type HandRow } from '../HandRows';

interface Props {
  api: CorralApi;
  session: SessionSummary | undefined;
  sessionId: string;
  atSeq: number;
  onClose(): void;
  onForked(child: SessionSummary): void;
}

/**
 * "Fork from here": a new session from the log up to an event, the original kept. Says what
 * will run again (from the host's preview) before anything happens; the main hand may come from
 * another environment, more hands may be attached, and a first message sent.
 */
export function ForkDialog({ api, session, sessionId, atSeq, onClose, onForked }: Props) {
  const ref = useRef<HTMLDialogElement>(null);
  const environments = useCatalog((s) => s.environments);
  const [title, setTitle] = useState('');
  const [envId, setEnvId] = useState('');
  const [hands, setHands] = useState<HandRow[]>([]);
  const [message, setMessage] = useState('');
  const [preview, setPreview] = useState<ForkPreview | null>(null);
  const [error, setError] = useState<ClientError | null>(null);
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    ref.current?.showModal();
  }, []);
  const withMessage = message.trim() !== '';
  useEffect(() => {
    let live = true;
    api.previewFork({ sessionId, atSeq, withMessage }).then(
      (p) => live && setPreview(p),
      (err: unknown) => live && setError(toClientError(err)),
    );
    return () => {
      live = false;
    };
  }, [api, sessionId, atSeq, withMessage]);

  const fork = async () => {
    setBusy(true);
    setError(null);
    try {
      const child = await api.forkSession({
        sessionId,
        fork: { at_seq: atSeq, ...(title.trim() ? { title: title.trim() } : {}) },
        ...(envId ? { environmentId: envId } : {}),
        ...(hands.length ? { hands: hands.map((h) => ({ environment_id: h.environmentId, name: h.name })) } : {}),
        ...(withMessage ? { message: { type: 'user.message' as const, content: [{ type: 'text' as const, text: message }] } } : {}),
      });
      onForked(child);
    } catch (err) {
      setError(toClientError(err));
      setBusy(false);
    }
  };
  const usable = environments.filter((e) => !e.archived_at);
  const mainEnv = environments.find((e) => e.id === session?.environment_id);
  return (
    <dialog ref={ref} className="dialog" aria-labelledby="fork-title" onClose={onClose} data-testid="fork-dialog">
      <form
        method="dialog"
        onSubmit={(e) => {
          e.preventDefault();
          void fork();
        }}
      >
        <h2 id="fork-title">Fork from #{atSeq}</h2>
        <label className="field">
          <span>Title</span>
          <input value={title} onChange={(e) => setTitle(e.target.value)} placeholder={`${session?.title || sessionId} · fork at #${atSeq}`} />
        </label>
        <label className="field">
          <span>Main hand</span>
          <select value={envId} onChange={(e) => setEnvId(e.target.value)}>
            <option value="">Same environment as now{mainEnv ? ` (${mainEnv.name}, ${mainEnv.config.type})` : ''}</option>
            {usable.map((e) => (
              <option key={e.id} value={e.id}>
                {e.name} ({e.config.type})
              </option>
            ))}
          </select>
        </label>
        <HandRows environments={usable} rows={hands} onChange={setHands} />
        <label className="field">
          <span>Message to send in the fork (optional)</span>
          <textarea value={message} onChange={(e) => setMessage(e.target.value)} rows={3} />
        </label>
        <section className="will-run" aria-label="What will happen" data-testid="fork-preview">
          <h3>What will happen</h3>
          {preview ? (
            <ul>
              {preview.will_run.map((line, k) => (
                <li key={k}>{line}</li>
              ))}
            </ul>
          ) : (
            <p className="muted">Working it out…</p>
          )}
        </section>
        {error && <ErrorNote error={error} />}
        <div className="dialog-actions">
          <button type="button" onClick={() => ref.current?.close()}>
            Cancel
          </button>
          <button type="submit" className="primary" disabled={busy || !preview}>
            {busy ? 'Forking…' : 'Fork'}
          </button>
        </div>
      </form>
    </dialog>
  );
}
