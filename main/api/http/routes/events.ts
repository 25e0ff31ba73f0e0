import { Hono } from 'hono';
import type { Host } from '../../../host';
import type { EventSlice } from '../../../session/types';
import { EVENT_TYPE_PATTERN } from '../../../session/validate-event';
import { eventSendBody, toLoggedInput } from '../schemas/events';
import { checkAnswers } from '../confirmations';
import { ApiError, notFound } from '../errors';
import { newOutcomeId } from '../ids';
import { jsonBody, queryEnum, queryInt, queryList, queryTime } from '../request';
import type { SlowReaderOptions } from '../../reader-limits';
import { HeldBytes } from '../held-bytes';
import { sharedEventsOf } from '../../shared-event-json';
import { streamSessionEvents } from '../sse';

/** Bytes of events in one page of the list at most (plus the event that reaches it). */
const LIST_PAGE_BYTES = 4 * 1024 * 1024;
/** What all SSE readers of a server may keep in memory while their clients are slow. */
const HELD_BYTES = 64 * 1024 * 1024;

interface EventCursor {
  s: number; // last seq shown
}

/** A `types[]` filter: each an event type's shape (a typo such as `bogus` would match nothing, silently). */
function eventTypes(types: string[] | undefined): string[] | undefined {
  const bad = types?.find((t) => t.length > 128 || !EVENT_TYPE_PATTERN.test(t));
  if (bad !== undefined) throw new ApiError('invalid_request_error', `types[] must be event types such as 'agent.message' or 'session.status_idle', got '${bad.slice(0, 64)}'`);
  return types;
}

const encode = (c: EventCursor) => Buffer.from(JSON.stringify(c)).toString('base64url');
function decode(token: string): EventCursor {
  try {
    const c = JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as EventCursor;
    if (Number.isInteger(c.s) && c.s >= 0) return c;
  } catch {
    // fall through
  }
  throw new ApiError('invalid_request_error', `'${token.slice(0, 40)}' is not a page token from this server`);
}

/** Options of the event routes. */
export interface EventRouteOptions extends SlowReaderOptions {
  /** How often an idle SSE stream sends a `ping`. */
  heartbeatMs: number;
}

/** `/v1/sessions/{id}/events`: list (cursor pages), send, and stream (SSE). */
export function eventRoutes(host: Host, opts: EventRouteOptions): Hono {
  const app = new Hono();
  const { log } = host;
  const held = new HeldBytes(HELD_BYTES);
  const shared = sharedEventsOf(log);

  app.get('/:id/events', (c) => {
    const id = c.req.param('id');
    const limit = queryInt(c, 'limit', { min: 1, max: 1000, fallback: 100 })!;
    const order = queryEnum(c, 'order', ['asc', 'desc'] as const) ?? 'asc';
    const token = c.req.query('page');
    const cursor = token ? decode(token) : undefined;
    const slice: EventSlice = {
      order,
      limit,
      maxBytes: LIST_PAGE_BYTES,
      types: eventTypes(queryList(c, 'types')),
      processedAfter: queryTime(c, 'created_at[gt]'),
      processedFrom: queryTime(c, 'created_at[gte]'),
      processedBefore: queryTime(c, 'created_at[lt]'),
      processedTo: queryTime(c, 'created_at[lte]'),
      ...(cursor ? (order === 'asc' ? { after: cursor.s } : { before: cursor.s }) : {}),
    };
    const { events, more } = log.getEventPage(id, slice);
    const last = events[events.length - 1];
    return c.json({ data: events, next_page: more && last ? encode({ s: last.seq }) : null });
  });

  app.post('/:id/events', async (c) => {
    const id = c.req.param('id');
    const session = log.getSession(id);
    const body = await jsonBody(c, eventSendBody);
    if (session.archived_at) {
      throw new ApiError('invalid_request_error', `session '${id}' is archived; it takes no new events`, { error_code: 'session_archived' });
    }
    const key = c.req.header('idempotency-key');
    // A repeated request (same key) returns what the first made; it is not checked again.
    if (!key || !log.hasIdempotencyKey(id, `api:${key}`)) checkAnswers(log, id, body.events);
    const events = log.emitEvents(
      id,
      body.events.map((e) => toLoggedInput(e, newOutcomeId)),
      key ? `api:${key}` : undefined,
    );
    return c.json({ data: events });
  });

  app.get('/:id/events/stream', (c) => {
    const id = c.req.param('id');
    const session = log.getSession(id);
    // Resume after the last event the client saw (SSE's Last-Event-ID, or Corral's after_seq);
    // without either, the stream carries what is appended from now on.
    let after = session.last_seq;
    const lastEventId = c.req.header('last-event-id');
    if (lastEventId) {
      const seen = log.findEvent(id, lastEventId);
      if (!seen) throw notFound('event', lastEventId);
      after = seen.seq;
    }
    const afterSeq = queryInt(c, 'after_seq', { min: 0, max: Number.MAX_SAFE_INTEGER });
    if (afterSeq !== undefined) {
      // A position past the end would skip every event up to it as they are appended: the
      // stream stayed silent while the session ran. Refused like model_request's at_seq.
      if (afterSeq > session.last_seq) throw new ApiError('invalid_request_error', `after_seq ${afterSeq} is past the session's last event (#${session.last_seq})`);
      after = afterSeq;
    }
    const deltaTypes = queryList(c, 'event_deltas');
    const unknown = deltaTypes?.find((t) => t !== 'agent.message' && t !== 'agent.thinking');
    if (unknown) throw new ApiError('invalid_request_error', `event_deltas: '${unknown}' has no live text (agent.message, agent.thinking do)`);
    const brains = host.brains;
    const feed = deltaTypes?.length && brains ? { types: new Set(deltaTypes), subscribe: (l: Parameters<typeof brains.subscribeDeltas>[1]) => brains.subscribeDeltas(id, l) } : undefined;
    return streamSessionEvents(c, { log, events: shared, sessionId: id, after, heartbeatMs: opts.heartbeatMs, deltas: feed, held, stallMs: opts.stallMs });
  });

  return app;
}
