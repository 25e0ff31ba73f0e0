import { useState } from 'react';
import type { ModelRequestView } from '../../../../main/api/ui/contract';

/** Characters of a block shown before it is cut in the structured view (the raw JSON has everything). */
const BLOCK_MAX = 600;

/**
 * The request the brain would send: model, limits, estimated tokens, tools, system, and each
 * message with its blocks — cache breakpoints and elided tool results marked — or the raw JSON.
 */
export function ModelRequest({ view }: { view: ModelRequestView }) {
  const [raw, setRaw] = useState(false);
  const { params } = view;
  return (
    <section className="model-request" data-testid="model-request" aria-label={`Model request at #${view.at_seq}`}>
      <h3>Model request at #{view.at_seq}</h3>
      <p className="muted small">{view.note}</p>
      <dl className="facts">
        <dt>Model</dt>
        <dd>{params.model}</dd>
        <dt>Size</dt>
        <dd data-testid="request-size">
          ≈{view.estimated_tokens.toLocaleString('en-US')} tokens · {params.messages.length} messages · max_tokens {params.max_tokens}
        </dd>
        <dt>Tools</dt>
        <dd>{params.tools?.map((t) => t.name).join(', ') || 'none'}</dd>
        {view.dropped_through !== undefined && (
          <>
            <dt>Dropped</dt>
            <dd className="warn">events #1–{view.dropped_through} (the oldest turns, to fit the window; still in the log)</dd>
          </>
        )}
        {view.elided_seqs.length > 0 && (
          <>
            <dt>Elided</dt>
            <dd className="warn">tool results #{view.elided_seqs.join(', #')} (to fit the window; still in the log)</dd>
          </>
        )}
      </dl>
      <button type="button" className="link" onClick={() => setRaw(!raw)} aria-pressed={raw}>
        {raw ? 'Structured view' : 'Raw JSON'}
      </button>
      {raw ? (
        <pre className="raw" data-testid="model-request-json">
          {JSON.stringify(params, null, 2)}
        </pre>
      ) : (
        <ol className="messages">
          {params.system?.map((b, k) => (
            <li key={`s${k}`} className="msg msg-system">
              <span className="role">system</span>
              {b.cache_control ? <span className="badge badge-neutral">cache ⟂</span> : null}
              <pre>{cut(String(b.text ?? ''))}</pre>
            </li>
          ))}
          {params.messages.map((m, k) => (
            <li key={k} className={`msg msg-${m.role}`} data-testid="request-message">
              <span className="role">{m.role}</span>
              {m.content.map((b, j) => (
                <div key={j} className="block">
                  <span className="muted">{b.type}</span>
                  {b.cache_control ? <span className="badge badge-neutral">cache ⟂</span> : null}
                  <pre>{cut(blockText(b))}</pre>
                </div>
              ))}
            </li>
          ))}
        </ol>
      )}
    </section>
  );
}

function blockText(b: { type: string; [k: string]: unknown }): string {
  if (typeof b.text === 'string') return b.text;
  if (b.type === 'tool_use') return `${String(b.name)} ${JSON.stringify(b.input)}`;
  if (b.type === 'tool_result') {
    const c = Array.isArray(b.content) ? (b.content as { text?: string; type?: string }[]).map((x) => x.text ?? `[${x.type}]`).join('\n') : '';
    return `${b.is_error ? '(error) ' : ''}${c}`;
  }
  if (b.type === 'thinking') return String(b.thinking ?? '');
  return JSON.stringify(b);
}

function cut(s: string): string {
  return s.length > BLOCK_MAX ? `${s.slice(0, BLOCK_MAX)}… (${s.length - BLOCK_MAX} more characters)` : s;
}
