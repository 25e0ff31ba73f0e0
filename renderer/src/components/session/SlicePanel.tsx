import { useState } from 'react';
import type { CorralApi, ModelRequestView, UiEvent } from '../../../../main/api/ui/contract';
import { toClientError, type ClientError } from '../../api/errors';
import { indexAtOrBefore } from '../../lib/session-index';
import { setSlice, useView } from '../../state/view';
import { ErrorNote } from '../ErrorNote';
import { ModelRequest } from './ModelRequest';

/** Raw events shown at once; the rest are counted. */
const SHOWN = 200;

/**
 * A slice of the log: its events raw (as the log holds them), and the model request the brain
 * would build from the log up to the slice's end, served by the host's buildRequest.
 */
export function SlicePanel({ api, sessionId, events }: { api: CorralApi; sessionId: string; events: readonly UiEvent[] }) {
  const slice = useView((s) => s.slice);
  const [request, setRequest] = useState<ModelRequestView | null>(null);
  const [error, setError] = useState<ClientError | null>(null);
  const [busy, setBusy] = useState(false);
  if (!slice) {
    return (
      <p className="empty">
        No slice. Shift-click two rows, shift-drag on the strip above, or use “Slice up to here” on an event.
      </p>
    );
  }
  const a = Math.max(0, indexAtOrBefore(events, slice.from - 1) + 1);
  const b = indexAtOrBefore(events, slice.to);
  const inRange = b >= a ? events.slice(a, Math.min(b + 1, a + SHOWN)) : [];
  const total = Math.max(0, b - a + 1);
  const load = async () => {
    setBusy(true);
    setError(null);
    try {
      setRequest(await api.getModelRequest({ sessionId, atSeq: slice.to }));
    } catch (err) {
      setError(toClientError(err));
    } finally {
      setBusy(false);
    }
  };
  const bound = (which: 'from' | 'to', v: string) => {
    const n = Number(v);
    if (Number.isInteger(n) && n > 0) setSlice({ ...slice, [which]: n });
  };
  return (
    <div className="slice-panel" data-testid="slice-panel">
      <div className="slice-bounds">
        <label>
          From #<BoundInput value={slice.from} onValue={(v) => bound('from', v)} label="Slice from" />
        </label>
        <label>
          to #<BoundInput value={slice.to} onValue={(v) => bound('to', v)} label="Slice to" />
        </label>
        <span className="muted">{total} events</span>
        <button type="button" className="link" onClick={() => setSlice(null)}>
          Clear
        </button>
      </div>
      <div className="slice-actions">
        <button type="button" onClick={() => void load()} disabled={busy} data-testid="load-model-request">
          {busy ? 'Building…' : `Model request at #${slice.to}`}
        </button>
      </div>
      {error && <ErrorNote error={error} />}
      {request && request.at_seq === slice.to && <ModelRequest view={request} />}
      <h3>Raw events</h3>
      <pre className="raw slice-raw" data-testid="slice-raw" aria-label={`Raw events ${slice.from} to ${slice.to}`}>
        {inRange.map((e) => JSON.stringify(e)).join('\n')}
      </pre>
      {total > SHOWN && <p className="muted">…and {total - SHOWN} more (narrow the slice to see them).</p>}
    </div>
  );
}

/**
 * A slice bound's field. What is typed is kept as typed (an emptied field stays empty while the
 * user types the next number) and applied when it is a number; leaving the field shows the
 * bound in force again.
 */
function BoundInput({ value, onValue, label }: { value: number; onValue(v: string): void; label: string }) {
  const [draft, setDraft] = useState<string | null>(null);
  return (
    <input
      type="number"
      min={1}
      value={draft ?? value}
      onChange={(e) => {
        setDraft(e.target.value);
        onValue(e.target.value);
      }}
      onBlur={() => setDraft(null)}
      aria-label={label}
    />
  );
}
