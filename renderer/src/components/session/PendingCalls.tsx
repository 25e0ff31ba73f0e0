import { useMemo, useState } from 'react';
import type { CorralApi, UiEvent } from '../../../../main/api/ui/contract';
import { toClientError, type ClientError } from '../../api/errors';
import { waitingCalls, wouldTouch } from '../../lib/waiting-calls';
import { ErrorNote } from '../ErrorNote';

interface Props {
  api: CorralApi;
  sessionId: string;
  events: readonly UiEvent[];
  /** The confirmation the host logged (shown at once, before the stream brings it). */
  onSent(event: UiEvent): void;
}

/**
 * The tool calls waiting for the user (`always_ask`): what each would run or touch, and Allow /
 * Deny (with a reason the model is told). Each answer is a `user.tool_confirmation`.
 */
export function PendingCalls({ api, sessionId, events, onSent }: Props) {
  const calls = useMemo(() => waitingCalls(events), [events]);
  if (calls.length === 0) return null;
  return (
    <section className="pending-calls" aria-label="Tool calls waiting for you" data-testid="pending-calls">
      <h3>
        {calls.length === 1 ? 'A tool call waits' : `${calls.length} tool calls wait`} for your confirmation
      </h3>
      <ul>
        {calls.map((c) => (
          <PendingCall key={c.id} api={api} sessionId={sessionId} call={c} onSent={onSent} />
        ))}
      </ul>
    </section>
  );
}

function PendingCall({ api, sessionId, call, onSent }: { api: CorralApi; sessionId: string; call: UiEvent; onSent(e: UiEvent): void }) {
  const [reason, setReason] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ClientError | null>(null);
  const name = String(call.name);
  const input = (call.input ?? {}) as Record<string, unknown>;
  const hand = typeof input.hand === 'string' ? input.hand : null;

  const answer = async (result: 'allow' | 'deny') => {
    setBusy(true);
    setError(null);
    try {
      const deny = result === 'deny' && reason.trim() ? { deny_message: reason.trim() } : {};
      onSent(await api.sendEvent({ sessionId, event: { type: 'user.tool_confirmation', tool_use_id: call.id, result, ...deny } }));
    } catch (err) {
      setError(toClientError(err));
      setBusy(false);
    }
  };

  return (
    <li className="pending-call" data-testid="pending-call" data-tool-use-id={call.id}>
      <div className="pending-call-what">
        <span className="badge">{name}</span>
        {hand && <span className="muted"> on {hand}</span>}
        <pre className="pending-call-target" data-testid="pending-call-target">
          {wouldTouch(name, input)}
        </pre>
      </div>
      {error && <ErrorNote error={error} />}
      <div className="pending-call-actions">
        <button type="button" className="primary" disabled={busy} onClick={() => void answer('allow')} data-testid="allow-call">
          Allow
        </button>
        <input value={reason} onChange={(e) => setReason(e.target.value)} placeholder="Reason (told to the model)" aria-label="Reason for denying" disabled={busy} data-testid="deny-reason" />
        <button type="button" className="danger" disabled={busy} onClick={() => void answer('deny')} data-testid="deny-call">
          Deny
        </button>
      </div>
    </li>
  );
}
