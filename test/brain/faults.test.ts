import { afterEach, describe, expect, it } from 'vitest';
import { startBrainHost, textOf, type BrainTestHost } from '../helpers/brain-host';

let t: BrainTestHost | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

const ok = { blocks: [{ type: 'text' as const, text: 'recovered' }] };
const types = (events: { type: string }[]) => events.map((e) => e.type);

describe('model API faults', () => {
  it('429: honours retry-after, reschedules, then succeeds', async () => {
    t = await startBrainHost([{ error: { status: 429, type: 'rate_limit_error', message: 'slow down' }, retryAfterMs: 300 }, ok]);
    const id = t.newSession();
    const events = await t.settled(id);
    const resched = events.find((e) => e.type === 'session.status_rescheduled')!;
    expect(resched).toMatchObject({ error_type: 'model_rate_limited_error' });
    // Never earlier than the server asked; jitter adds at most a small window (retry.ts).
    expect(resched.retry_in_ms).toBeGreaterThanOrEqual(300);
    expect(resched.retry_in_ms).toBeLessThanOrEqual(400);
    const [first, second] = t.model.requests;
    expect(second!.at - first!.at).toBeGreaterThanOrEqual(290);
    expect(textOf(events.find((e) => e.type === 'agent.message'))).toBe('recovered');
    expect(events.filter((e) => e.type === 'span.model_request_end').map((e) => e.is_error)).toEqual([true, false]);
    expect(events[events.length - 1]!.stop_reason).toEqual({ type: 'end_turn' });
  });

  it('529 every time: retries, then session.error model_overloaded_error and idle retries_exhausted', async () => {
    t = await startBrainHost(() => ({ error: { status: 529, type: 'overloaded_error', message: 'Overloaded' } }), { retries: 2 });
    const id = t.newSession();
    const events = await t.settled(id);
    expect(t.model.requests).toHaveLength(3);
    expect(events.filter((e) => e.type === 'session.status_rescheduled')).toHaveLength(2);
    const err = events.find((e) => e.type === 'session.error')!;
    expect(err.error).toMatchObject({ type: 'model_overloaded_error', retry_status: { type: 'exhausted' } });
    expect(events[events.length - 1]).toMatchObject({ type: 'session.status_idle', stop_reason: { type: 'retries_exhausted' } });
    // Nothing half-written: every request span is closed.
    expect(events.filter((e) => e.type === 'span.model_request_start')).toHaveLength(3);
    expect(events.filter((e) => e.type === 'span.model_request_end')).toHaveLength(3);
    expect(t.host.log.getSession(id).status).toBe('idle');
  });

  it('500 then success; the retry count is kept in the log', async () => {
    t = await startBrainHost([{ error: { status: 500, type: 'api_error' } }, { error: { status: 502, type: 'api_error' } }, ok]);
    const id = t.newSession();
    const events = await t.settled(id);
    expect(events.filter((e) => e.type === 'session.status_rescheduled').map((e) => e.attempt)).toEqual([1, 2]);
    expect(types(events)).toContain('agent.message');
    expect(types(events)).not.toContain('session.error');
  });

  it('a stream cut mid-way: the partial answer stays, its tool call is reported not run, and the retry continues', async () => {
    t = await startBrainHost([
      { blocks: [{ type: 'text', text: 'Let me look.' }, { type: 'tool_use', name: 'bash', input: { command: 'touch should-not-exist' } }, { type: 'text', text: 'never' }], cutAfterBlocks: 2 },
      ok,
    ]);
    const id = t.newSession();
    const events = await t.settled(id);
    const toolUse = events.find((e) => e.type === 'agent.tool_use')!;
    const result = events.find((e) => e.type === 'agent.tool_result')!;
    expect(result.tool_use_id).toBe(toolUse.id);
    expect(result.is_error).toBe(true);
    expect(textOf(result)).toMatch(/Not run/);
    expect(types(events).filter((x) => x === 'agent.tool_result')).toHaveLength(1);
    const { existsSync } = await import('node:fs');
    expect(existsSync(`${t.host.hands.workDirOf(id)}/should-not-exist`)).toBe(false);
    // The retried request carried the partial answer and the result: a valid transcript.
    const retry = t.model.requests[1]!.body;
    expect(retry.messages.map((m: { role: string }) => m.role)).toEqual(['user', 'assistant', 'user']);
    expect(textOf(events.filter((e) => e.type === 'agent.message').pop())).toBe('recovered');
  });

  it('400: reported once as model_request_failed_error, not retried', async () => {
    t = await startBrainHost([{ error: { status: 400, type: 'invalid_request_error', message: 'prompt is too long' } }, ok]);
    const id = t.newSession();
    const events = await t.settled(id);
    expect(t.model.requests).toHaveLength(1);
    const err = events.find((e) => e.type === 'session.error')!;
    expect(err.error).toMatchObject({ type: 'model_request_failed_error', retry_status: { type: 'terminal' } });
    expect((err.error as { message: string }).message).toContain('prompt is too long');
    expect(types(events)).not.toContain('session.status_rescheduled');
    expect(events[events.length - 1]!.type).toBe('session.status_idle');
  });

  it('no model key: a clear terminal error, no request', async () => {
    t = await startBrainHost([ok]);
    delete process.env.ANTHROPIC_API_KEY;
    const id = t.newSession();
    const events = await t.settled(id);
    expect(t.model.requests).toHaveLength(0);
    expect((events.find((e) => e.type === 'session.error')!.error as { message: string }).message).toMatch(/ANTHROPIC_API_KEY/);
  });
});
