import type { CorralApi } from '../../../../main/api/ui/contract';
import { useWorkItems } from '../../state/use-work-items';
import { WorkItemsTable } from './WorkItemsTable';

/**
 * A session's machines that dial in, live (not at the cursor): the work items of its
 * self_hosted hands, with the worker, the lease and the last heartbeat. Nothing when it has none.
 */
export function SessionWorkers({ api, sessionId }: { api: CorralApi; sessionId: string }) {
  const { items } = useWorkItems(api, { sessionId });
  if (items.length === 0) return null;
  return (
    <section className="session-workers" aria-label="Workers of this session">
      <h3>
        Workers <span className="live-tag">live</span>
      </h3>
      <WorkItemsTable items={items} showSession={false} />
    </section>
  );
}
