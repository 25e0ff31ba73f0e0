import { useEffect, useState } from 'react';
import type { CorralApi, UiHandPool } from '../../../../main/api/ui/contract';

/**
 * The warm pools of hands by environment id, live: the host pushes every pool's state as it
 * changes (watchHandPools), so a hand being made, made ready or taken shows as it happens.
 * Empty until the first push (the list then falls back to the state it was read with).
 */
export function useHandPools(api: CorralApi): Map<string, UiHandPool> {
  const [pools, setPools] = useState<Map<string, UiHandPool>>(() => new Map());
  useEffect(
    () =>
      api.watchHandPools(
        {},
        (items) => setPools(new Map(items.map(({ environment_id, ...pool }) => [environment_id, pool]))),
        // A host without the stream (older, or a transport that dropped it): the list's own state stays.
        () => {},
      ),
    [api],
  );
  return pools;
}
