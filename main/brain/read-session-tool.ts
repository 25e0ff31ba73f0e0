import type { ToolOutcome } from '../hands/types';
import { capForModel } from '../hands/output-cap';
import type { EventSlice, LoggedEvent } from '../session/types';

/** Bytes of events the read_session_events tool reads at most (its output is capped anyway). */
const READ_TOOL_BYTES = 256 * 1024;

/** Corral's read_session_events tool: a slice of the session's own log, capped like any tool's output. */
export async function readSessionTool(io: { readEvents(slice: EventSlice): Promise<LoggedEvent[]> }, input: Record<string, unknown>): Promise<ToolOutcome> {
  const int = (v: unknown) => (typeof v === 'number' && Number.isInteger(v) && v > 0 ? v : undefined);
  const limit = Math.min(int(input.limit) ?? 20, 200);
  const types = Array.isArray(input.types) ? input.types.filter((t): t is string => typeof t === 'string') : undefined;
  try {
    // Read and capped like any tool's output: 200 events of up to 4 MiB each would not fit.
    const events = await io.readEvents({ from: int(input.from), to: int(input.to), before: int(input.before), types, limit, maxBytes: READ_TOOL_BYTES });
    if (events.length === 0) return { content: 'No events in that range.', isError: false };
    return { content: capForModel(events.map((e) => JSON.stringify(e)).join('\n')).content, isError: false };
  } catch (err) {
    return { content: `Could not read the session: ${err instanceof Error ? err.message : String(err)}`, isError: true };
  }
}
