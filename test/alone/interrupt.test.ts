import { afterEach, describe, expect, it } from 'vitest';
import { startBrainHost, type BrainTestHost } from '../helpers/brain-host';

// Timing tests run on their own (npm run test:alone), after the main suite, so that other test
// files do not compete for the two cores while they measure.
let t: BrainTestHost | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

const ok = { blocks: [{ type: 'text' as const, text: 'recovered' }] };
const types = (events: { type: string }[]) => events.map((e) => e.type);

describe('interrupt', () => {
  it('stops a slow model stream within 500 ms and idles with the interrupt recorded', async () => {
    t = await startBrainHost([{ blocks: [{ type: 'text', text: 'slow' }], firstTokenDelayMs: 5000 }]);
    const id = t.newSession();
    await waitFor(() => t!.events(id).some((e) => e.type === 'span.model_request_start'));
    await new Promise((r) => setTimeout(r, 100));
    const sent = Date.now();
    const interrupt = t.host.log.emitEvent(id, { type: 'user.interrupt' });
    const events = await t.settled(id, 5000);
    const idle = events.filter((e) => e.type === 'session.status_idle').pop()!;
    expect(Date.parse(idle.processed_at) - sent).toBeLessThan(500);
    expect(idle.seq).toBeGreaterThan(interrupt.seq);
    expect(types(events)).not.toContain('agent.message');
  });

  it('kills a running command on the hand within 500 ms', async () => {
    t = await startBrainHost([{ blocks: [{ type: 'tool_use', name: 'bash', input: { command: 'sleep 30; touch finished' } }] }, ok]);
    const id = t.newSession();
    await waitFor(() => t!.events(id).some((e) => e.type === 'agent.tool_use'));
    await new Promise((r) => setTimeout(r, 300));
    const sent = Date.now();
    t.host.log.emitEvent(id, { type: 'user.interrupt' });
    const events = await t.settled(id, 5000);
    const idle = events.filter((e) => e.type === 'session.status_idle').pop()!;
    expect(Date.parse(idle.processed_at) - sent).toBeLessThan(500);
    const result = events.find((e) => e.type === 'agent.tool_result')!;
    expect(result.is_error).toBe(true);
    // One request only: the interrupt ended the turn.
    expect(t.model.requests).toHaveLength(1);
    await new Promise((r) => setTimeout(r, 1000));
    const { existsSync } = await import('node:fs');
    expect(existsSync(`${t.host.hands.workDirOf(id)}/finished`)).toBe(false);
  });
});


async function waitFor(cond: () => boolean, timeoutMs = 10_000) {
  const end = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > end) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 10));
  }
}
