import type { WorkerPoll, WorkRow } from '../../catalog/work';
import type { Host } from '../../host';
import type { UiWorkerSeen, UiWorkItem } from './workers-contract';

/** How many items the first picture holds. */
const FIRST_PICTURE = 50;
/** Workers in the first picture: those that polled this recently. */
const RECENT_POLLERS_MS = 60_000;

export function workItemToUi(r: WorkRow, environmentName: string | null): UiWorkItem {
  return {
    type: 'work_item',
    id: r.id,
    environment_id: r.environment_id,
    environment_name: environmentName,
    session_id: r.session_id,
    hand: r.hand,
    kind: r.data_type,
    state: r.state,
    worker_id: r.worker_id,
    created_at: r.created_at,
    acknowledged_at: r.acknowledged_at,
    latest_heartbeat_at: r.latest_heartbeat_at,
    lease_ttl_s: r.lease_ttl_s,
    lease_expires_at: r.lease_expires_ms !== null ? new Date(r.lease_expires_ms).toISOString() : null,
    stop_reason: r.stop_reason,
    stopped_at: r.stopped_at,
  };
}

/**
 * The `watchWorkers` stream: the newest work items matching the filter (oldest of them first),
 * then every change to a matching item as it is committed (the work store's listeners). Each
 * item is the item's whole state, so a client keeps the last one per id. Subscribed before the
 * first picture is read, on the same tick: nothing between them is missed.
 */
export function watchWorkers(host: Pick<Host, 'dialIn' | 'environments'>, input: { environmentId?: string; sessionId?: string }, push: (item: UiWorkItem | UiWorkerSeen) => void): () => void {
  const names = new Map<string, string | null>();
  const nameOf = (envId: string) => {
    if (!names.has(envId)) names.set(envId, (host.environments.get(envId)?.record as { name?: string } | undefined)?.name ?? null);
    return names.get(envId)!;
  };
  const matches = (r: WorkRow) => (!input.environmentId || r.environment_id === input.environmentId) && (!input.sessionId || r.session_id === input.sessionId);
  const unsubscribe = host.dialIn.work.onChange((r) => {
    if (matches(r)) push(workItemToUi(r, nameOf(r.environment_id)));
  });
  // Workers waiting for work belong to no session: only a view that is not a session's gets them.
  const seen = (p: WorkerPoll): UiWorkerSeen => ({ type: 'worker', environment_id: p.environment_id, environment_name: nameOf(p.environment_id), worker_id: p.worker_id, last_poll_at: new Date(p.last_poll_ms).toISOString() });
  const unsubscribePolls = input.sessionId
    ? () => {}
    : host.dialIn.work.onPoll((p) => {
        if (!input.environmentId || p.environment_id === input.environmentId) push(seen(p));
      });
  // Leases that ran out while nobody asked are ended now, so the picture is not stale.
  host.dialIn.expireLeases();
  if (!input.sessionId) for (const p of host.dialIn.work.pollers(Date.now() - RECENT_POLLERS_MS, input.environmentId).reverse()) push(seen(p));
  for (const r of host.dialIn.work.recent({ ...input, limit: FIRST_PICTURE }).reverse()) push(workItemToUi(r, nameOf(r.environment_id)));
  return () => {
    unsubscribe();
    unsubscribePolls();
  };
}
