import { useEffect, useState } from 'react';
import type { CorralApi } from '../../../main/api/ui/contract';
import { acquireSessionEvents, type SessionEvents } from './events';

/**
 * The live event store of a session while the calling component is mounted. Changing
 * `attempt` acquires again (after the store was forgotten, that starts a fresh stream).
 */
export function useSessionEvents(api: CorralApi, sessionId: string, attempt = 0): SessionEvents | null {
  const [events, setEvents] = useState<SessionEvents | null>(null);
  useEffect(() => {
    const held = acquireSessionEvents(api, sessionId);
    setEvents(held.events);
    return held.release;
  }, [api, sessionId, attempt]);
  return events;
}
