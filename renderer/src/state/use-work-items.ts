import { useEffect, useState } from 'react';
import type { CorralApi, UiError, UiWorkItem } from '../../../main/api/ui/contract';

/**
 * The work items of machines that dial in, kept live by the host's `watchWorkers` stream: each
 * pushed item is that item's whole state, so the last one per id wins. Newest first.
 */
export function useWorkItems(api: CorralApi, filter: { environmentId?: string; sessionId?: string }): { items: UiWorkItem[]; error: UiError | null } {
  const [byId, setById] = useState<ReadonlyMap<string, UiWorkItem>>(new Map());
  const [error, setError] = useState<UiError | null>(null);
  const { environmentId, sessionId } = filter;
  useEffect(() => {
    setById(new Map());
    setError(null);
    const input = { ...(environmentId ? { environmentId } : {}), ...(sessionId ? { sessionId } : {}) };
    return api.watchWorkers(
      input,
      (item) => setById((prev) => new Map(prev).set(item.id, item)),
      (e) => setError(e),
    );
  }, [api, environmentId, sessionId]);
  const items = [...byId.values()].sort((a, b) => (a.created_at === b.created_at ? b.id.localeCompare(a.id) : b.created_at.localeCompare(a.created_at)));
  return { items, error };
}
