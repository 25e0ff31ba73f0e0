import { describe, expect, it } from 'vitest';
import type { LiveTextItem, UiEvent } from '../../main/api/ui/contract';
import { applyIncoming, newMemory, type Incoming, type Timeline } from '../../renderer/src/state/timeline';

const ID = 'sevt_01J00000000000000000000001';
const start = (id = ID, type: 'agent.message' | 'agent.thinking' = 'agent.message'): Incoming => ({ live: { type: 'event_start', event: { id, type } } });
const delta = (text: string, id = ID): Incoming => ({
  live: { type: 'event_delta', event_id: id, delta: { type: 'content_delta', content: { type: 'text', text }, index: 0 } } satisfies LiveTextItem,
});
const logged = (seq: number, type: string, id = `sevt_${seq}`, fields: Record<string, unknown> = {}): Incoming => ({
  event: { id, type, seq, processed_at: '2026-01-01T00:00:00.000Z', ...fields } as UiEvent,
});

function run(...batches: Incoming[][]): Timeline {
  const memory = newMemory();
  let t: Timeline = { events: [], live: [] };
  for (const b of batches) t = applyIncoming(t, b, memory, 'now') ?? t;
  return t;
}

describe('the timeline store', () => {
  it('live text grows with deltas and goes in the same step its event is logged', () => {
    const memory = newMemory();
    let t: Timeline = { events: [], live: [] };
    t = applyIncoming(t, [logged(1, 'user.message'), start(), delta('Hel')], memory, 'now')!;
    expect(t.live).toEqual([{ id: ID, type: 'agent.message', text: 'Hel', startedAt: 'now' }]);
    t = applyIncoming(t, [delta('lo')], memory)!;
    expect(t.live[0]!.text).toBe('Hello');
    t = applyIncoming(t, [logged(2, 'agent.message', ID)], memory)!;
    expect(t.live).toEqual([]);
    expect(t.events.map((e) => e.seq)).toEqual([1, 2]);
  });

  it('ignores deltas of events it saw no start for, and starts of events already logged', () => {
    expect(run([delta('lost')]).live).toEqual([]);
    expect(run([logged(1, 'agent.message', ID)], [start(), delta('late')]).live).toEqual([]);
    expect(run([start(), start(), delta('once')]).live).toHaveLength(1);
  });

  it('drops live text that will never be logged when the model request ends', () => {
    expect(run([start(), delta('cut sh')], [logged(1, 'span.model_request_end')]).live).toEqual([]);
    expect(run([start(), delta('x')], [logged(1, 'session.status_idle')]).live).toEqual([]);
  });

  it('keeps events ascending and each seq once; returns null when nothing changed', () => {
    const memory = newMemory();
    const t = applyIncoming({ events: [], live: [] }, [logged(3, 'a.b'), logged(1, 'a.b'), logged(3, 'a.b')], memory)!;
    expect(t.events.map((e) => e.seq)).toEqual([1, 3]);
    const u = applyIncoming(t, [logged(2, 'a.b')], memory)!;
    expect(u.events.map((e) => e.seq)).toEqual([1, 2, 3]);
    expect(applyIncoming(u, [logged(2, 'a.b'), delta('nobody')], memory)).toBeNull();
  });

  it('thinking is previewed too', () => {
    const t = run([start(ID, 'agent.thinking'), delta('hmm')]);
    expect(t.live[0]).toMatchObject({ type: 'agent.thinking', text: 'hmm' });
  });
});
