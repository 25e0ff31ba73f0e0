import { useState } from 'react';
import type { CorralApi, UiEvent } from '../../../../main/api/ui/contract';
import { toClientError, type ClientError } from '../../api/errors';
import { duration, str, textOf } from '../../lib/tool-call';
import { ErrorNote } from '../ErrorNote';
import { AnsiText } from './AnsiText';
import { DiffView } from './DiffView';

/** Lines shown from each end of a long output before "Show all". */
const FOLD = 20;

interface Props {
  api: CorralApi;
  sessionId: string;
  use: UiEvent | undefined;
  result: UiEvent | undefined;
}

/**
 * A tool call at a glance: the tool and its key input (a command, a file), the hand, the exit
 * code and duration, the output with its colours folded to head and tail, the full output the
 * host kept (on demand), screenshots as images and edits as diffs.
 */
export function ToolCallView({ api, sessionId, use, result }: Props) {
  const input = (use?.input ?? {}) as Record<string, unknown>;
  const details = (result?.details ?? {}) as { exit_code?: unknown; duration_ms?: unknown; hand?: unknown; full_output?: { chars?: unknown } };
  const exit = typeof details.exit_code === 'number' ? details.exit_code : undefined;
  const ms = typeof details.duration_ms === 'number' ? details.duration_ms : undefined;
  const hand = str(details.hand) ?? str(input.hand) ?? 'main';
  const name = str(use?.name) ?? 'tool';
  return (
    <div className="tool-call" data-testid="tool-call">
      <div className="tool-head">
        <strong>{name}</strong>
        <span className="muted">on {hand}</span>
        {exit !== undefined && <span className={`badge badge-${exit === 0 ? 'ok' : 'error'}`} data-testid="exit-badge">exit {exit}</span>}
        {result?.is_error === true && exit === undefined && <span className="badge badge-error">error</span>}
        {ms !== undefined && <span className="muted">{duration(ms)}</span>}
        {!result && <span className="badge badge-neutral">no result yet</span>}
      </div>
      <ToolInput name={name} input={input} />
      {result && <ToolOutput api={api} sessionId={sessionId} result={result} keptChars={typeof details.full_output?.chars === 'number' ? details.full_output.chars : null} />}
    </div>
  );
}

function ToolInput({ name, input }: { name: string; input: Record<string, unknown> }) {
  if (name === 'bash' && str(input.command)) return <pre className="command" aria-label="Command">$ {String(input.command)}</pre>;
  if (name === 'edit' && typeof input.old_string === 'string' && typeof input.new_string === 'string') {
    return <DiffView path={str(input.file_path) ?? 'file'} before={input.old_string} after={input.new_string} />;
  }
  if (name === 'write' && typeof input.content === 'string') return <DiffView path={str(input.file_path) ?? 'file'} before="" after={input.content} />;
  const { hand: _h, ...rest } = input;
  if (Object.keys(rest).length === 0) return null;
  return <pre className="command">{JSON.stringify(rest, null, 2)}</pre>;
}

function ToolOutput({ api, sessionId, result, keptChars }: { api: CorralApi; sessionId: string; result: UiEvent; keptChars: number | null }) {
  const [all, setAll] = useState(false);
  const [full, setFull] = useState<{ text: string; next: number | null; total: number } | null>(null);
  const [loading, setLoading] = useState(false);
  const [error, setError] = useState<ClientError | null>(null);
  const text = textOf((result.content as unknown[] | undefined)?.filter((b) => (b as { type?: string }).type === 'text') ?? []);
  const images = ((result.content ?? []) as { type?: string; source?: { type?: string; media_type?: string; data?: string } }[]).filter((b) => b.type === 'image' && b.source?.type === 'base64');
  const lines = text.split('\n');
  const folded = !all && lines.length > FOLD * 2 + 5;
  const shown = folded ? [...lines.slice(0, FOLD), `… ${lines.length - FOLD * 2} more lines …`, ...lines.slice(-FOLD)].join('\n') : text;

  const load = async (offset: number) => {
    setLoading(true);
    setError(null);
    try {
      const piece = await api.readFullOutput({ sessionId, seq: result.seq, offset });
      setFull((f) => ({ text: (offset === 0 ? '' : (f?.text ?? '')) + piece.text, next: piece.next_offset, total: piece.total_bytes }));
    } catch (err) {
      setError(toClientError(err));
    } finally {
      setLoading(false);
    }
  };

  return (
    <div className="tool-output">
      {images.map((img, k) => (
        <img key={k} className="shot" src={`data:${img.source!.media_type};base64,${img.source!.data}`} alt={`Screenshot ${k + 1} from the tool call #${result.seq}`} data-testid="tool-image" />
      ))}
      {!full && <AnsiText text={shown} />}
      {!full && folded && (
        <button type="button" className="link" onClick={() => setAll(true)}>
          Show all {lines.length} lines
        </button>
      )}
      {keptChars !== null && !full && (
        <p className="muted">
          The model saw a shortened copy.{' '}
          <button type="button" className="link" onClick={() => void load(0)} disabled={loading} data-testid="load-full-output">
            {loading ? 'Loading…' : `Show the full output (${keptChars.toLocaleString('en-US')} characters)`}
          </button>
        </p>
      )}
      {full && (
        <div className="full-output" data-testid="full-output" aria-label="Full output">
          <p className="muted">Full output, {full.total.toLocaleString('en-US')} bytes, as the hand wrote it:</p>
          <AnsiText text={full.text} className="tall" />
          {full.next !== null && (
            <button type="button" className="link" onClick={() => void load(full.next!)} disabled={loading}>
              Load more
            </button>
          )}
        </div>
      )}
      {error && <ErrorNote error={error} />}
    </div>
  );
}
