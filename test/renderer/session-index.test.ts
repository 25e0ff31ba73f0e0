import { describe, expect, it } from 'vitest';
import type { UiEvent } from '../../main/api/ui/contract';
import { RowModel } from '../../renderer/src/lib/rows';
import { SessionIndex } from '../../renderer/src/lib/session-index';
import type { Filters } from '../../renderer/src/state/view';

let seq = 0;
const ev = (type: string, fields: Record<string, unknown> = {}, t = seq * 1000): UiEvent =>
  ({ id: `sevt_${++seq}`, type, seq, processed_at: new Date(Date.UTC(2026, 0, 1) + t).toISOString(), ...fields }) as UiEvent;

function session(): UiEvent[] {
  seq = 0;
  const use1 = ev('agent.tool_use', { name: 'bash', input: { command: 'ls' } });
  const use2 = ev('agent.tool_use', { name: 'bash', input: { command: 'uname', hand: 'box' } });
  const start = ev('span.model_request_start');
  return [
    ev('user.message', { content: [{ type: 'text', text: 'hi' }] }),
    ev('session.status_running'),
    start,
    ev('agent.message', { content: [{ type: 'text', text: 'ok' }] }),
    ev('span.model_request_end', { model_request_start_id: start.id, model_usage: { input_tokens: 10, output_tokens: 5, cache_read_input_tokens: 3, cache_creation_input_tokens: 1 }, first_token_ms: 250 }),
    ev('hand.attached', { hand: 'box', environment_id: 'env_1' }),
    use1,
    ev('hand.provisioning', { hand: 'main', kind: 'local' }),
    ev('hand.ready', { hand: 'main', kind: 'local', duration_ms: 40 }),
    ev('agent.tool_result', { tool_use_id: use1.id, details: { hand: 'main', exit_code: 0 } }),
    use2,
    ev('hand.provisioning', { hand: 'box', kind: 'docker' }),
    ev('hand.lost', { hand: 'box', reason: 'provisioning failed: no image' }),
    ev('agent.tool_result', { tool_use_id: use2.id, is_error: true, details: { hand: 'box' } }),
    ev('session.status_idle'),
    ev('user.message', { content: [{ type: 'text', text: 'again' }] }),
    ev('hand.handed_over', { hand: 'box', to_session_id: 'sesn_2' }),
  ];
}

const noFilters: Filters = { hidden: [], hand: null, failedOnly: false, collapsed: [], text: '' };

describe('the session index', () => {
  it('finds turns, status, usage and each hand\'s state at any position, incrementally', () => {
    const events = session();
    const idx = new SessionIndex();
    idx.update(events.slice(0, 7));
    idx.update(events);
    expect(idx.count).toBe(17);
    expect(idx.turnStarts).toEqual([0, 15]);
    expect(idx.statusAfter(3)).toBe('running');
    expect(idx.statusAfter(14)).toBe('idle');
    expect(idx.usageThrough(3)).toMatchObject({ input: 0, requests: 0 });
    expect(idx.usageThrough(4)).toMatchObject({ input: 10, output: 5, cacheRead: 3, cacheWrite: 1, requests: 1 });
    expect(idx.turnUsage()).toEqual([{ turn: 1, input: 10, output: 5, cacheRead: 3, cacheWrite: 1, requests: 1, ttftMs: 250 }]);
    expect(idx.resultOfUse.get(6)).toBe(9);
    expect(idx.useOfResult.get(13)).toBe(10);
    const at = (i: number) => Object.fromEntries(idx.hands.handsAt(i).map((h) => [h.name, h.state]));
    expect(at(5)).toEqual({ main: 'held', box: 'held' });
    expect(at(6)).toEqual({ main: 'busy', box: 'held' });
    expect(at(7)).toEqual({ main: 'provisioning', box: 'held' });
    expect(at(8)).toEqual({ main: 'busy', box: 'held' });
    expect(at(9)).toEqual({ main: 'ready', box: 'held' });
    expect(at(11)).toEqual({ main: 'ready', box: 'provisioning' });
    expect(at(12)).toEqual({ main: 'ready', box: 'lost' });
    expect(at(16)).toEqual({ main: 'ready', box: 'gone' });
    const main = idx.hands.handsAt(16).find((h) => h.name === 'main')!;
    expect(main).toMatchObject({ kind: 'local', provisionedMs: 40, calls: 1, replaced: 0 });
    expect(idx.hands.handsAt(12).find((h) => h.name === 'box')!.lastLoss).toMatch(/no image/);
    expect(main.unsandboxed).toBeNull();
    expect(idx.transcriptAt(16, 6)).toEqual([0, 3, 15]);
    expect(idx.sameKind(6, 1)).toBe(10);
  });

  it('a hand handed over live arrives ready; one handed over before it was made arrives held', () => {
    seq = 0;
    const idx = new SessionIndex();
    idx.update([
      ev('user.message', { content: [{ type: 'text', text: 'hi' }] }),
      ev('hand.received', { hand: 'box', from_session_id: 'sesn_1', from_hand: 'box', live: true }),
      ev('hand.received', { hand: 'spare', from_session_id: 'sesn_1', from_hand: 'spare', live: false }),
    ]);
    const at = (i: number) => Object.fromEntries(idx.hands.handsAt(i).map((h) => [h.name, h.state]));
    expect(at(2)).toMatchObject({ box: 'ready', spare: 'held' });
  });

  it('knows when a hand\'s commands run without a sandbox, from its hand.ready on', () => {
    const idx = new SessionIndex();
    idx.update([
      ev('user.message', { content: [{ type: 'text', text: 'hi' }] }),
      ev('hand.provisioning', { hand: 'main', kind: 'local' }),
      ev('hand.ready', { hand: 'main', kind: 'local', duration_ms: 5, sandbox: { enabled: false, reason: 'the sandbox is turned off in the settings', on_purpose: true } }),
    ]);
    expect(idx.hands.handsAt(1).find((h) => h.name === 'main')!.unsandboxed).toBeNull();
    expect(idx.hands.handsAt(2).find((h) => h.name === 'main')!.unsandboxed).toBe('the sandbox is turned off in the settings');
  });

  it('rows: a header per turn, filters, folded turns, and the row of any event', () => {
    const events = session();
    const idx = new SessionIndex();
    idx.update(events);
    const rows = new RowModel();
    rows.sync(events, idx, noFilters);
    expect(rows.count).toBe(19);
    expect(rows.header.filter(Boolean)).toHaveLength(2);
    expect(rows.rowOf(0)).toBe(1);
    expect(rows.rowOf(15)).toBe(17);
    const failed = new RowModel();
    failed.sync(events, idx, { ...noFilters, failedOnly: true });
    expect(failed.index.filter((_, r) => !failed.header[r]).map((i) => events[i]!.type)).toEqual(['hand.lost', 'agent.tool_result']);
    const box = new RowModel();
    box.sync(events, idx, { ...noFilters, hand: 'box' });
    expect(box.index.filter((_, r) => !box.header[r])).toEqual([5, 10, 11, 12, 13, 16]);
    const folded = new RowModel();
    folded.sync(events, idx, { ...noFilters, collapsed: [1] });
    expect(folded.count).toBe(4);
  });
});
