import type { CorralApi, UiEnvironment } from '../../../../main/api/ui/contract';
import { useWorkItems } from '../../state/use-work-items';
import { WorkItemsTable } from './WorkItemsTable';

/**
 * The hands panel's machines that dial in: each self_hosted environment, and the work items its
 * workers hold (worker, session and hand, state, lease, last heartbeat), live.
 */
export function DialInList({ api, environments }: { api: CorralApi; environments: readonly UiEnvironment[] }) {
  const selfHosted = environments.filter((e) => e.config.type === 'self_hosted' && !e.archived_at);
  const { items, error } = useWorkItems(api, {});
  const live = new Set(selfHosted.map((e) => e.id));
  const shown = items.filter((w) => live.has(w.environment_id));
  return (
    <section className="machine-list dial-in-list" aria-label="Machines that dial in">
      <h3>Machines that dial in</h3>
      {selfHosted.length === 0 && <p className="empty">No self_hosted environment yet: make one under Environments, then a worker key, and run the worker on the machine.</p>}
      {selfHosted.length > 0 && (
        <p className="muted small">
          {selfHosted.map((e) => e.name).join(', ')}: {shown.some((w) => w.state === 'starting' || w.state === 'active') ? 'a worker holds work now' : 'no worker holds work now'}
        </p>
      )}
      {error && (
        <p className="error-note" role="alert">
          {error.message}
        </p>
      )}
      {shown.length > 0 && <WorkItemsTable items={shown} showSession />}
    </section>
  );
}
