import type { CorralApi, UiEvent } from '../../../../main/api/ui/contract';
import { indexOfSeq, type SessionIndex } from '../../lib/session-index';
import { summarise } from '../../lib/summary';
import { clockTime } from '../../lib/time';
import { setSlice, useView } from '../../state/view';
import { ToolCallView } from './ToolCallView';

interface Props {
  api: CorralApi;
  sessionId: string;
  events: readonly UiEvent[];
  index: SessionIndex;
  onFork(seq: number): void;
}

/**
 * The inspected event: a tool call with its result (or the reverse) as a readable card, else
 * its fields; and what can be done from it: slice to here, see the model request here, fork.
 */
export function Inspector({ api, sessionId, events, index, onFork }: Props) {
  const seq = useView((s) => s.inspect ?? s.cursor);
  const i = seq === null ? index.count - 1 : indexOfSeq(events, seq);
  const event = events[i];
  if (!event) return <p className="empty">Pick an event in the list.</p>;
  const useIdx = event.type.endsWith('tool_result') ? index.useOfResult.get(i) : event.type === 'agent.tool_use' ? i : undefined;
  const use = useIdx === undefined ? undefined : events[useIdx];
  const resultIdx = useIdx === undefined ? undefined : index.resultOfUse.get(useIdx);
  const result = resultIdx === undefined ? (event.type.endsWith('tool_result') ? event : undefined) : events[resultIdx];
  const slice = useView.getState().slice;
  return (
    <section className="inspector" data-testid="inspector" aria-label={`Event ${event.seq}`}>
      <header>
        <span>
          #{event.seq} <strong>{event.type}</strong> <span className="muted">{clockTime(event.processed_at)}</span>
        </span>
      </header>
      <div className="inspector-actions">
        <button type="button" onClick={() => onFork(event.seq)} data-testid="fork-here">
          Fork from here…
        </button>
        <button type="button" onClick={() => setSlice({ from: slice && slice.from <= event.seq ? slice.from : 1, to: event.seq })} data-testid="slice-to-here">
          Slice up to here
        </button>
        <button type="button" onClick={() => setSlice({ from: event.seq, to: slice && slice.to >= event.seq ? slice.to : event.seq })}>
          Slice from here
        </button>
      </div>
      {use || result ? (
        <ToolCallView api={api} sessionId={sessionId} use={use} result={result} />
      ) : (
        <p className="inspector-summary">{summarise(event).text}</p>
      )}
      <details open={!(use || result)}>
        <summary>Raw event</summary>
        <pre className="raw">{JSON.stringify(event, null, 2)}</pre>
      </details>
    </section>
  );
}
