import type { UiWorkItem } from '../../../../main/api/ui/contract';
import { clockTime } from '../../lib/time';

const STATE_WORDS: Record<UiWorkItem['state'], string> = {
  queued: 'waiting for a worker',
  starting: 'claimed',
  active: 'running (heartbeating)',
  stopping: 'told to stop',
  stopped: 'stopped',
};

/**
 * Work items of machines that dial in, one row each: which worker holds it, for which session
 * and hand, its state, when its lease runs out and the last heartbeat. Times carry their ISO
 * value in `dateTime`, so a change is visible even within the same second.
 */
export function WorkItemsTable({ items, showSession }: { items: readonly UiWorkItem[]; showSession: boolean }) {
  return (
    <table className="hands-table workers-table" data-testid="work-items">
      <thead>
        <tr>
          <th scope="col">Work item · worker</th>
          {showSession && <th scope="col">For</th>}
          <th scope="col">State</th>
          <th scope="col">Lease · heartbeat</th>
        </tr>
      </thead>
      <tbody>
        {items.map((w) => (
          <tr key={w.id} data-testid="work-item" data-work-id={w.id} data-state={w.state}>
            <td>
              <code>{w.id}</code>
              <div className="muted small">
                {w.hand ? `hand ${w.hand} · ` : ''}
                {w.worker_id ? `worker ${w.worker_id}` : 'no worker named'}
              </div>
            </td>
            {showSession && (
              <td>
                {w.environment_name ?? w.environment_id}
                <div className="small">{w.session_id ? <code>{w.session_id}</code> : <span className="muted">health check</span>}</div>
              </td>
            )}
            <td className={`work-${w.state}`}>
              {STATE_WORDS[w.state]}
              {w.stop_reason && <div className="muted small">{w.stop_reason.replace(/_/g, ' ')}</div>}
            </td>
            <td>
              <div>
                until{' '}
                {w.lease_expires_at ? (
                  <time data-testid="work-lease" dateTime={w.lease_expires_at}>
                    {clockTime(w.lease_expires_at)}
                  </time>
                ) : (
                  <span className="muted">–</span>
                )}
              </div>
              <div className="muted small">
                beat{' '}
                {w.latest_heartbeat_at ? (
                  <time data-testid="work-heartbeat" dateTime={w.latest_heartbeat_at}>
                    {clockTime(w.latest_heartbeat_at)}
                  </time>
                ) : (
                  'none yet'
                )}
              </div>
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
