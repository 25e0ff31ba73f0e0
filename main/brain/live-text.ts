/**
 * Live text of an event not logged yet, in the Managed Agents stream shapes (`event_start`, then
 * `event_delta`s naming the event's id). Dependency-free: the UI contract reuses it.
 */
export type LiveDelta =
  | { type: 'event_start'; event: { id: string; type: 'agent.message' | 'agent.thinking' } }
  | { type: 'event_delta'; event_id: string; delta: { type: 'content_delta'; content: { type: 'text'; text: string }; index: number } };
