import type { UiEvent } from '../../../../main/api/ui/contract';
import { indexAtOrBefore, type SessionIndex } from '../../lib/session-index';
import { textOf } from '../../lib/tool-call';
import { duration } from '../../lib/tool-call';
import { clockTime } from '../../lib/time';
import { useView } from '../../state/view';
import { UsageChart } from './UsageChart';

const fmt = (n: number) => n.toLocaleString('en-US');
const STATE_WORDS = { held: 'held (not made yet)', provisioning: 'provisioning…', ready: 'ready', busy: 'running a call', lost: 'lost', gone: 'handed over / released' } as const;

/**
 * The session as it stood at the cursor: status, turn, each hand's state (and how long its
 * provisioning took, calls so far, replacements), tokens so far, the last messages, and the
 * usage chart with the cursor's turn marked. Everything is read from the index by binary search.
 */
export function StatePanel({ events, index }: { events: readonly UiEvent[]; index: SessionIndex }) {
  const cursor = useView((s) => s.cursor);
  const i = cursor === null ? index.count - 1 : indexAtOrBefore(events, cursor);
  if (i < 0) return <p className="empty">No events yet.</p>;
  const e = events[i]!;
  const usage = index.usageThrough(i);
  const hands = index.hands.handsAt(i);
  const turn = index.turnOf[i] ?? 0;
  return (
    <div className="state-panel" data-testid="state-panel" data-seq={e.seq}>
      <dl className="facts">
        <dt>At</dt>
        <dd>
          #{e.seq} · {clockTime(e.processed_at)} {cursor === null && <span className="live-tag">live</span>}
        </dd>
        <dt>Status</dt>
        <dd>
          <span className={`status status-${index.statusAfter(i)}`} data-testid="state-status">
            {index.statusAfter(i)}
          </span>
        </dd>
        <dt>Turn</dt>
        <dd>
          {turn} of {index.turnStarts.length}
        </dd>
        <dt>Tokens</dt>
        <dd data-testid="state-tokens">
          in {fmt(usage.input)} · out {fmt(usage.output)} · cache read {fmt(usage.cacheRead)} · write {fmt(usage.cacheWrite)}
        </dd>
      </dl>
      <h3>Hands</h3>
      <table className="hands-table" data-testid="state-hands">
        <thead>
          <tr>
            <th scope="col">Hand</th>
            <th scope="col">State</th>
            <th scope="col">Made in</th>
            <th scope="col">Calls</th>
          </tr>
        </thead>
        <tbody>
          {hands.map((h, k) => (
            <tr key={h.name} data-hand={h.name} data-state={h.state}>
              <td>
                <span className={`swatch hand-${k % 6}`} aria-hidden="true" /> {h.name}
                {h.kind && <span className="muted"> {h.kind}</span>}
                {h.unsandboxed !== null && (
                  <div className="badge badge-error" data-testid="hand-unsandboxed" title="Commands on this hand run on this machine without the sandbox: they can read what you can read.">
                    not sandboxed: {h.unsandboxed}
                  </div>
                )}
              </td>
              <td className={`lane-${h.state}`}>
                {STATE_WORDS[h.state]}
                {h.replaced > 0 && <span className="muted"> · replaced {h.replaced}×</span>}
                {h.state === 'lost' && h.lastLoss && <div className="muted small">{h.lastLoss}</div>}
              </td>
              <td>{h.provisionedMs === null ? '–' : duration(h.provisionedMs)}</td>
              <td>{h.calls}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <h3>Usage per turn</h3>
      <UsageChart index={index} turn={turn} />
      <h3>Transcript</h3>
      <ol className="transcript" data-testid="state-transcript">
        {index.transcriptAt(i, 6).map((k) => {
          const m = events[k]!;
          return (
            <li key={m.seq} className={m.type === 'user.message' ? 'from-user' : 'from-agent'}>
              <span className="muted">{m.type === 'user.message' ? 'User' : 'Agent'} #{m.seq}</span>
              <p>{clip(textOf(m.content))}</p>
            </li>
          );
        })}
      </ol>
    </div>
  );
}

function clip(s: string, max = 400): string {
  return s.length > max ? `${s.slice(0, max - 1)}…` : s;
}
