import { afterEach, describe, expect, it } from 'vitest';
import { MAX_EVENT_BYTES } from '../../main/session/validate-event';
import { startBrainHost, textOf, type BrainTestHost } from '../helpers/brain-host';

let t: BrainTestHost | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

describe('model output over the log cap', () => {
  it('a huge reply is split over several events and a huge tool call is answered, not run; the session goes on', async () => {
    const reply = 'r'.repeat(MAX_EVENT_BYTES + 1024 * 1024);
    t = await startBrainHost([
      { blocks: [{ type: 'text', text: reply }, { type: 'tool_use', name: 'write', input: { file_path: 'big.txt', content: 'w'.repeat(MAX_EVENT_BYTES) } }] },
      { blocks: [{ type: 'text', text: 'understood' }] },
    ]);
    const id = t.newSession('write a lot', { context_window_tokens: 10_000_000, max_tokens: 1_000_000 });
    const events = await t.settled(id, 60_000);
    const messages = events.filter((e) => e.type === 'agent.message');
    expect(messages.slice(0, -1).map(textOf).join('')).toBe(reply);
    expect(messages.length).toBe(3);
    expect(textOf(messages[2])).toBe('understood');
    const use = events.find((e) => e.type === 'agent.tool_use')!;
    expect(use).toMatchObject({ name: 'write', input: {}, input_dropped: { bytes: expect.any(Number) } });
    const result = events.find((e) => e.type === 'agent.tool_result')!;
    expect(result).toMatchObject({ tool_use_id: use.id, is_error: true });
    expect(textOf(result)).toMatch(/^Not run: the input \(4\.0 MiB\) is over the log's limit/);
    expect(events[events.length - 1]).toMatchObject({ type: 'session.status_idle', stop_reason: { type: 'end_turn' } });
    expect(events.some((e) => e.type === 'session.error')).toBe(false);
  }, 90_000);
});
