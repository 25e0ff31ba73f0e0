/**
 * Forking a long session and finding its hands stay off the host's event loop. The fork sums
 * the prefix's usage a page at a time (a 1 ms timer ticks while the call is pending); the hands
 * a session holds are read through the type index, which costs the membership events only.
 * Both answer what a full read of the log, folded in place, answers.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { UiService } from '../../main/api/ui/service';
import { newId } from '../../main/db/ids';
import { HAND_MEMBERSHIP_EVENTS, MAIN_HAND } from '../../main/hands/membership';
import { addUsage, emptyUsage } from '../../main/session/derived';
import type { EventInput, EventSlice, LoggedEvent } from '../../main/session/types';
import { startLongSession, ticksDuring } from '../helpers/long-session';
import type { TestServer } from '../helpers/server';

let t: TestServer;
let ui: UiService;
let sessionId: string;
let envId: string;
let last: number;

beforeAll(async () => {
  ({ t, ui, sessionId, envId, last } = await startLongSession((turn, env) => {
    const call = newId.event();
    const events: EventInput[] = [
      { type: 'user.message', content: [{ type: 'text', text: `turn ${turn} ${'words '.repeat(20)}` }] },
      { type: 'span.model_request_end', model_request_start_id: `x${turn}`, is_error: false, model_usage: { input_tokens: turn, output_tokens: 2, cache_read_input_tokens: turn % 7, cache_creation_input_tokens: 1 } },
      { type: 'agent.tool_use', id: call, name: 'bash', input: { command: `echo ${turn}` }, model_tool_use_id: `toolu_${call.slice(5)}` },
      { type: 'agent.tool_result', tool_use_id: call, content: [{ type: 'text', text: 'out '.repeat(100) }], is_error: false },
      { type: 'session.status_idle', stop_reason: { type: 'end_turn' } },
    ];
    // A hand comes and goes now and then; `spare-<k>` for the last few stay.
    if (turn % 1000 === 0) events.push({ type: 'hand.attached', hand: `spare-${turn / 1000}`, environment_id: env });
    if (turn % 1000 === 500 && turn < 5000) events.push({ type: 'hand.released', hand: `spare-${(turn - 500) / 1000}` });
    return events;
  }));
}, 60_000);
afterAll(() => t?.close());

/** The session's events (of `slice`), read in place with the general reader, page by page. */
function readAll(id: string, slice: EventSlice = {}): LoggedEvent[] {
  const out: LoggedEvent[] = [];
  for (;;) {
    const page = t.host.log.getEvents(id, { ...slice, after: out.at(-1)?.seq ?? slice.after, limit: 5000 });
    out.push(...page);
    if (page.length < 5000) return out;
  }
}

const usageInPlace = (id: string, to: number) => readAll(id, { to }).reduce(addUsage, emptyUsage());

function handsInPlace(id: string): string[] {
  const held = new Set([MAIN_HAND]);
  for (const e of readAll(id, { types: [...HAND_MEMBERSHIP_EVENTS] })) {
    if (e.type === 'hand.attached' || e.type === 'hand.received') held.add(String(e.hand));
    else held.delete(String(e.hand));
  }
  return [...held];
}

describe('forks and hands of a long session stay off the event loop', () => {
  it('a fork over the UI reads its usage a page at a time, the same as summed in place', async () => {
    expect(last).toBeGreaterThanOrEqual(40_000);
    const at = last - 3;
    const { value, ticks } = await ticksDuring(() => ui.call('forkSession', { sessionId, fork: { at_seq: at } }));
    expect(ticks).toBeGreaterThan(0);
    const child = t.host.log.getSession(value.id);
    expect(child).toMatchObject({ parent_id: sessionId, fork_seq: at, last_seq: at, status: 'idle' });
    const expected = usageInPlace(sessionId, at);
    expect(expected.input_tokens).toBeGreaterThan(0);
    expect(child.usage).toEqual(expected);
    // The fork holds the hands the parent held at the fork point, found through the index.
    expect(value.hands?.map((h) => h.name)).toEqual(handsInPlace(value.id));
  }, 60_000);

  it('a fork over HTTP, and a fork of that fork, get the usage of their whole chain', async () => {
    const api = (path: string, body: unknown) =>
      fetch(`${t.server.url}${path}`, { method: 'POST', headers: { 'x-api-key': t.apiKey, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const at = 20_001;
    const res = await api(`/v1/sessions/${sessionId}/fork`, { at_seq: at });
    expect(res.status).toBe(200);
    const fork = (await res.json()) as { id: string };
    expect(t.host.log.getSession(fork.id).usage).toEqual(usageInPlace(sessionId, at));
    // The fork's own events count too when it is forked in turn (its log is two segments).
    t.host.log.emitEvents(fork.id, [
      { type: 'span.model_request_end', model_request_start_id: 'own', is_error: false, model_usage: { input_tokens: 1000, output_tokens: 10, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 } },
      { type: 'hand.attached', hand: 'late', environment_id: envId },
    ]);
    const grandchild = (await (await api(`/v1/sessions/${fork.id}/fork`, {})).json()) as { id: string };
    const row = t.host.log.getSession(grandchild.id);
    expect(row.fork_seq).toBe(at + 2);
    expect(row.usage).toEqual(usageInPlace(fork.id, at + 2));
    expect(row.usage.input_tokens).toBe(usageInPlace(sessionId, at).input_tokens + 1000);
    expect(t.host.hands.list(grandchild.id).map((h) => h.name)).toEqual(handsInPlace(grandchild.id));
    expect(handsInPlace(grandchild.id)).toContain('late');
    // The route's call, timed on its own (an HTTP round trip turns the loop anyway).
    const { value: again, ticks } = await ticksDuring(() => t.host.log.forkSessionPaged(fork.id, at + 2));
    expect(ticks).toBeGreaterThan(0);
    expect(again.usage).toEqual(row.usage);
  }, 60_000);

  it('the hands a session holds, and typed reads, equal a full read of the log', () => {
    const names = t.host.hands.list(sessionId).map((h) => h.name);
    expect(names).toEqual(handsInPlace(sessionId));
    expect(names).toEqual([MAIN_HAND, 'spare-5', 'spare-6', 'spare-7']);
    const types = [...HAND_MEMBERSHIP_EVENTS];
    for (const slice of [{}, { after: 12_345 }, { to: 30_000 }, { after: 5000, to: 25_000, limit: 3 }, { limit: 1 }]) {
      expect(t.host.log.getEventsOfTypes(sessionId, types, slice)).toEqual(t.host.log.getEvents(sessionId, { ...slice, types }));
    }
    const mixed = ['span.model_request_end', 'hand.released'];
    expect(t.host.log.getEventsOfTypes(sessionId, mixed, { after: 2400, limit: 700 })).toEqual(t.host.log.getEvents(sessionId, { after: 2400, limit: 700, types: mixed }));
  });
});
