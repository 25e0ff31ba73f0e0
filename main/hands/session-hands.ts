import type { EnvironmentStore } from '../catalog/environments';
import type { SessionLog } from '../session/store';

/** The name of the hand a session gets from its own environment. */
export const MAIN_HAND = 'main';

/** Events that change which hands a session holds (written by the host, read back from the log). */
export const HAND_MEMBERSHIP_EVENTS = ['hand.attached', 'hand.released', 'hand.handed_over', 'hand.received'] as const;

/** One hand a session holds: where it comes from and what it is. */
export interface SessionHandSpec {
  name: string;
  environmentId: string | null;
  /** The environment's config (local, ssh, docker, adb, …); undefined when it was deleted. */
  config: ({ type: string } & Record<string, unknown>) | undefined;
}

/**
 * The hands a session holds, rebuilt from its log: its environment's hand (`main`) plus hands
 * attached since, minus those released or handed over.
 */
export function sessionHandSpecs(log: SessionLog, environments: EnvironmentStore, sessionId: string): SessionHandSpec[] {
  const session = log.getSession(sessionId);
  const configOf = (envId: string | null) => {
    if (!envId) return { type: 'local' };
    return environments.get(envId)?.record.config as SessionHandSpec['config'];
  };
  const hands = new Map<string, SessionHandSpec>();
  hands.set(MAIN_HAND, { name: MAIN_HAND, environmentId: session.environment_id, config: configOf(session.environment_id) });
  for (const e of log.getEvents(sessionId, { types: [...HAND_MEMBERSHIP_EVENTS], limit: 100_000 })) {
    const name = String(e.hand);
    if (e.type === 'hand.attached' || e.type === 'hand.received') {
      const envId = typeof e.environment_id === 'string' ? e.environment_id : null;
      hands.set(name, { name, environmentId: envId, config: configOf(envId) });
    } else hands.delete(name);
  }
  return [...hands.values()];
}
