import type { LoggedEvent, SessionStatus, SessionUsageTotals } from './types';

const STATUS_BY_EVENT: Record<string, SessionStatus> = {
  'session.status_running': 'running',
  'session.status_idle': 'idle',
  'session.status_rescheduled': 'rescheduling',
  'session.status_terminated': 'terminated',
};

/** The session status an event type sets, if it is a status event. */
export function statusOf(type: string): SessionStatus | undefined {
  return STATUS_BY_EVENT[type];
}

export function emptyUsage(): SessionUsageTotals {
  return { input_tokens: 0, output_tokens: 0, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 };
}

function n(v: unknown): number {
  return typeof v === 'number' && Number.isFinite(v) ? v : 0;
}

/** Adds a `span.model_request_end` event's `model_usage` to the totals (other events add nothing). */
export function addUsage(totals: SessionUsageTotals, event: { type: string; [k: string]: unknown }): SessionUsageTotals {
  if (event.type !== 'span.model_request_end') return totals;
  const u = (event.model_usage ?? {}) as Record<string, unknown>;
  return {
    input_tokens: totals.input_tokens + n(u.input_tokens),
    output_tokens: totals.output_tokens + n(u.output_tokens),
    cache_read_input_tokens: totals.cache_read_input_tokens + n(u.cache_read_input_tokens),
    cache_creation_input_tokens: totals.cache_creation_input_tokens + n(u.cache_creation_input_tokens),
  };
}

/** The one event type that carries usage. */
export const USAGE_EVENT = 'span.model_request_end';

/** Reads a page of a log's usage events (seq > after, seq <= to, at most limit). */
export type UsagePageReader = (slice: { after: number; to: number; limit: number }) => LoggedEvent[];

const USAGE_PAGE = 1000;

/** Usage summed over a log's events up to a position, read a page at a time. */
export function usageThrough(read: UsagePageReader, to: number): SessionUsageTotals {
  let usage = emptyUsage();
  for (let after = 0; ; ) {
    const page = read({ after, to, limit: USAGE_PAGE });
    for (const e of page) usage = addUsage(usage, e);
    if (page.length < USAGE_PAGE) return usage;
    after = page[page.length - 1]!.seq;
  }
}

/** usageThrough with a turn of the event loop between pages (about a millisecond each). */
export async function usageThroughPaged(read: UsagePageReader, to: number): Promise<SessionUsageTotals> {
  let usage = emptyUsage();
  for (let after = 0; ; ) {
    const page = read({ after, to, limit: USAGE_PAGE });
    for (const e of page) usage = addUsage(usage, e);
    if (page.length < USAGE_PAGE) return usage;
    after = page[page.length - 1]!.seq;
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
}
