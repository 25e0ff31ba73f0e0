import { useEffect, useState } from 'react';
import type { CorralApi, UiError, UiWorkerSeen, UiWorkItem } from '../../../main/api/ui/contract';

/**
 * Machines that dial in, kept live by the host's `watchWorkers` stream: the work items (each
 * pushed item is that item's whole state, so the last one per id wins; newest first) and the
 * workers seen polling (the latest sighting per environment and worker).
 */
export function useWorkItems(api: CorralApi, filter: { environmentId?: string; sessionId?: string }): { items: UiWorkItem[]; workers: UiWorkerSeen[]; error: UiError | null } {
  const [byId, setById] = useState<ReadonlyMap<string, UiWorkItem>>(new Map());
  const [seen, setSeen] = useState<ReadonlyMap<string, UiWorkerSeen>>(new Map());
  const [error, setError] = useState<UiError | null>(null);
  const { environmentId, sessionId } = filter;
  useEffect(() => {
    setById(new Map());
    setSeen(new Map());
    setError(null);
    const input = { ...(environmentId ? { environmentId } : {}), ...(sessionId ? { sessionId } : {}) };
    return api.watchWorkers(
      input,
      (item) => {
        if (item.type === 'work_item') setById((prev) => new Map(prev).set(item.id, item));
        else setSeen((prev) => new Map(prev).set(`${item.environment_id} ${item.worker_id}`, item));
      },
      (e) => setError(e),
    );
  }, [api, environmentId, sessionId]);
  const items = [...byId.values()].sort((a, b) => (a.created_at === b.created_at ? b.id.localeCompare(a.id) : b.created_at.localeCompare(a.created_at)));
  const workers = [...seen.values()].sort((a, b) => b.last_poll_at.localeCompare(a.last_poll_at));
  return { items, workers, error };
}
