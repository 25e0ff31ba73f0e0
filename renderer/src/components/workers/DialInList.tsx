import type { CorralApi, UiEnvironment } from '../../../../main/api/ui/contract';
import { clockTime } from '../../lib/time';
import { useWorkItems } from '../../state/use-work-items';
import { WorkItemsTable } from './WorkItemsTable';

/**
 * The hands panel's machines that dial in: each self_hosted environment with the workers seen
 * polling it (machines ready for work), and the work items workers hold (worker, session and
 * hand, state, lease, last heartbeat), live.
 */
export function DialInList({ api, environments }: { api: CorralApi; environments: readonly UiEnvironment[] }) {
  const selfHosted = environments.filter((e) => e.config.type === 'self_hosted' && !e.archived_at);
  const { items, workers, error } = useWorkItems(api, {});
  const live = new Set(selfHosted.map((e) => e.id));
  const shown = items.filter((w) => live.has(w.environment_id));
  return (
    <section className="machine-list dial-in-list" aria-label="Machines that dial in">
      <h3>Machines that dial in</h3>
      {selfHosted.length === 0 && <p className="empty">No self_hosted environment yet: make one under Environments, then a worker key, and run the worker on the machine.</p>}
      <ul>
        {selfHosted.map((e) => {
          const polling = workers.filter((w) => w.environment_id === e.id);
          return (
            <li key={e.id} className="machine" data-testid={`dial-in-${e.name}`}>
              <strong>{e.name}</strong>
              <div className="muted small">
                {polling.length === 0
                  ? 'no worker seen polling in the last minute'
                  : polling.map((w) => (
                      <span key={w.worker_id} data-testid="worker-seen" data-worker-id={w.worker_id}>
                        worker {w.worker_id} polling (last seen <time dateTime={w.last_poll_at}>{clockTime(w.last_poll_at)}</time>){' '}
                      </span>
                    ))}
              </div>
            </li>
          );
        })}
      </ul>
      {error && (
        <p className="error-note" role="alert">
          {error.message}
        </p>
      )}
      {shown.length > 0 && <WorkItemsTable items={shown} showSession />}
    </section>
  );
}
