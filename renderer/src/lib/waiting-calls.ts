import type { UiEvent } from '../../../main/api/ui/contract';

/** What a call held for the user would touch: the command it runs, or the file or pattern. */
export function wouldTouch(name: string, input: Record<string, unknown>): string {
  const s = (v: unknown) => (typeof v === 'string' ? v : '');
  if (name === 'bash') return s(input.command);
  if (name === 'read' || name === 'write' || name === 'edit') return s(input.file_path);
  if (name === 'glob' || name === 'grep') return `${s(input.pattern)}${s(input.path) ? ` in ${s(input.path)}` : ''}`;
  return JSON.stringify(input).slice(0, 400);
}

/**
 * The tool calls waiting for the user's confirmation now: those the newest idle lists
 * (`requires_action`) that are held for confirmation and have no answer after it. Reads only
 * the log's tail, from that idle on.
 */
export function waitingCalls(events: readonly UiEvent[]): UiEvent[] {
  let at = events.length - 1;
  while (at >= 0 && events[at]!.type !== 'session.status_idle') at--;
  const idle = events[at];
  const stop = idle?.stop_reason as { type?: string; event_ids?: string[] } | undefined;
  if (!idle || stop?.type !== 'requires_action' || !stop.event_ids?.length) return [];
  const answered = new Set<string>();
  for (let i = at + 1; i < events.length; i++) {
    const e = events[i]!;
    if (typeof e.tool_use_id === 'string') answered.add(e.tool_use_id);
  }
  const wanted = new Set(stop.event_ids.filter((id) => !answered.has(id)));
  const out: UiEvent[] = [];
  for (let i = at - 1; i >= 0 && wanted.size > 0; i--) {
    const e = events[i]!;
    if (!wanted.has(e.id)) continue;
    wanted.delete(e.id);
    if (e.type === 'agent.tool_use' && e.evaluated_permission === 'ask') out.unshift(e);
  }
  return out;
}
