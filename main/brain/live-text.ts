/**
 * Live text of an event not logged yet, in the Managed Agents stream shapes (`event_start`, then
 * `event_delta`s naming the event's id). Dependency-free: the UI contract reuses it.
 */
export type LiveDelta =
  | { type: 'event_start'; event: { id: string; type: 'agent.message' | 'agent.thinking' } }
  | { type: 'event_delta'; event_id: string; delta: { type: 'content_delta'; content: { type: 'text'; text: string }; index: number } };

/** The longest text one live delta carries (the host refuses longer ones; see ipc-schema.ts). */
export const MAX_DELTA_CHARS = 256 * 1024;

/**
 * A delta as pieces of at most MAX_DELTA_CHARS characters (a model server may send a huge
 * text delta at once; real ones are small), never splitting a surrogate pair.
 */
export function splitDelta(d: LiveDelta, max = MAX_DELTA_CHARS): LiveDelta[] {
  if (d.type !== 'event_delta' || d.delta.content.text.length <= max) return [d];
  const text = d.delta.content.text;
  const out: LiveDelta[] = [];
  for (let start = 0; start < text.length; ) {
    let end = Math.min(text.length, start + max);
    const c = text.charCodeAt(end - 1);
    if (end < text.length && c >= 0xd800 && c <= 0xdbff) end -= 1;
    out.push({ ...d, delta: { ...d.delta, content: { type: 'text', text: text.slice(start, end) } } });
    start = end;
  }
  return out;
}
