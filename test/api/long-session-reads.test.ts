/**
 * UI calls that read a whole session up to a position (the model request view, the fork
 * preview) do it off the host's event loop: the model request in a worker thread, the fork
 * preview a page at a time. A 40k-event session shows it: the loop keeps turning (a 1 ms timer
 * ticks) while each call is pending, and the answers are the same as built in place.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { analyse } from '../../main/brain/analyse';
import type { UiService } from '../../main/api/ui/service';
import { buildModelRequestView, eventsThrough, modelRequestJob } from '../../main/api/ui/calls/model-request';
import { newId } from '../../main/db/ids';
import { startLongSession, ticksDuring } from '../helpers/long-session';
import type { TestServer } from '../helpers/server';

let t: TestServer;
let ui: UiService;
let sessionId: string;
let last: number;

beforeAll(async () => {
  ({ t, ui, sessionId, last } = await startLongSession((turn) => {
    const call = newId.event();
    return [
      { type: 'user.message', content: [{ type: 'text', text: `turn ${turn} ${'words '.repeat(20)}` }] },
      { type: 'agent.tool_use', id: call, name: 'bash', input: { command: `echo ${turn}` }, model_tool_use_id: `toolu_${call.slice(5)}` },
      { type: 'agent.tool_result', tool_use_id: call, content: [{ type: 'text', text: 'out '.repeat(100) }], is_error: false },
      { type: 'agent.message', content: [{ type: 'text', text: `done ${turn}` }] },
      { type: 'session.status_idle', stop_reason: { type: 'end_turn' } },
    ];
  }));
}, 60_000);
afterAll(() => t?.close());

describe('whole-session reads of the UI stay off the event loop', () => {
  it('the model request view is built in a worker thread, the same as built in place', async () => {
    expect(last).toBeGreaterThanOrEqual(40_000);
    const { value, ticks } = await ticksDuring(() => ui.call('getModelRequest', { sessionId, atSeq: last }));
    expect(ticks).toBeGreaterThan(0);
    const inPlace = buildModelRequestView(t.host.log, modelRequestJob(t.host, sessionId, last));
    expect(value).toEqual(inPlace);
    expect(value.context_seq).toBe(last);
    // A later call reuses the worker's connection and sees events appended since.
    t.host.log.emitEvent(sessionId, { type: 'user.message', content: [{ type: 'text', text: 'one more' }] });
    const after = await ui.call('getModelRequest', { sessionId, atSeq: last + 1 });
    expect(JSON.stringify(after.params.messages.at(-1))).toContain('one more');
  }, 60_000);

  it('a bad position or unknown session is refused before any worker runs', async () => {
    await expect(ui.call('getModelRequest', { sessionId, atSeq: last + 100 })).rejects.toThrow(/past the session's last event/);
    await expect(ui.call('getModelRequest', { sessionId: 'sesn_nope', atSeq: 1 })).rejects.toThrow();
  });

  it('the fork preview folds the log a page at a time, with the same analysis as in one go', async () => {
    const { value, ticks } = await ticksDuring(() => ui.call('previewFork', { sessionId, atSeq: last }));
    expect(ticks).toBeGreaterThan(0);
    const a = analyse(eventsThrough(t.host.log, sessionId, last));
    expect(value).toMatchObject({ at_seq: last, status_at: a.status, needs_model: a.needsModel, open_request: a.openRequest !== undefined });
  }, 60_000);
});
