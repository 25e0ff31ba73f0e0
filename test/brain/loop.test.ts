import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { buildRequest } from '../../main/brain/context';
import { validateMessagesRequest } from '../fixtures/model-server';
import type { Reply } from '../fixtures/model-server-types';
import { startBrainHost, textOf, type BrainTestHost } from '../helpers/brain-host';

let t: BrainTestHost | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

describe('the brain loop', () => {
  it('runs a turn with real tools and idles with end_turn', async () => {
    t = await startBrainHost([
      { blocks: [{ type: 'text', text: 'I will write it.' }, { type: 'tool_use', name: 'write', input: { file_path: 'hello.txt', content: 'hello, world\n' } }] },
      { blocks: [{ type: 'tool_use', name: 'bash', input: { command: 'cat hello.txt' } }], usage: { input_tokens: 50, output_tokens: 7, cache_read_input_tokens: 40 } },
      { blocks: [{ type: 'text', text: 'Done: hello.txt says hello, world.' }] },
    ]);
    const id = t.newSession('create hello.txt and show me it');
    const all = await t.settled(id);
    // The hand is provisioned at the first tool call (not at session start), once.
    const handEvents = all.filter((e) => e.type.startsWith('hand.'));
    expect(handEvents.map((e) => e.type)).toEqual(['hand.provisioning', 'hand.ready']);
    expect(handEvents[0]!.seq).toBeGreaterThan(all.find((e) => e.type === 'agent.tool_use')!.seq);
    expect(handEvents[1]).toMatchObject({ hand: 'main', kind: 'local' });
    const events = all.filter((e) => !e.type.startsWith('hand.'));
    expect(events.map((e) => e.type)).toEqual([
      'user.message',
      'session.status_running',
      'span.model_request_start',
      'agent.message',
      'agent.tool_use',
      'span.model_request_end',
      'agent.tool_result',
      'span.model_request_start',
      'agent.tool_use',
      'span.model_request_end',
      'agent.tool_result',
      'span.model_request_start',
      'agent.message',
      'span.model_request_end',
      'session.status_idle',
    ]);
    const file = path.join(t.host.hands.workDirOf(id), 'hello.txt');
    expect(fs.readFileSync(file, 'utf8')).toBe('hello, world\n');
    const results = events.filter((e) => e.type === 'agent.tool_result');
    expect(results.map((r) => r.is_error)).toEqual([false, false]);
    expect(textOf(results[1])).toContain('hello, world');
    expect(events[events.length - 1]!.stop_reason).toEqual({ type: 'end_turn' });
    expect(t.host.log.getSession(id).usage.cache_read_input_tokens).toBe(40);
    // Each finished request says how long its first token took (the window's usage chart reads it).
    for (const end of events.filter((e) => e.type === 'span.model_request_end')) expect(end.first_token_ms).toEqual(expect.any(Number));
    expect(t.host.log.getSession(id).status).toBe('idle');

    // Every request the brain sent was a valid Messages request, and each carried the tools.
    expect(t.model.requests).toHaveLength(3);
    for (const r of t.model.requests) {
      expect(validateMessagesRequest(r.body)).toBeNull();
      expect(r.body.stream).toBe(true);
      expect(r.body.system[0].text).toBe('You are a test agent.');
      expect(r.body.tools.map((x: { name: string }) => x.name)).toEqual(expect.arrayContaining(['bash', 'write', 'read_session_events']));
    }
    const third = t.model.requests[2]!.body;
    const lastUser = third.messages[third.messages.length - 1];
    expect(lastUser.content[0]).toMatchObject({ type: 'tool_result', tool_use_id: events[8]!.id });
    // The request is the pure function of the log: rebuilding it gives the same messages.
    const rebuilt = buildRequest(all.filter((e) => e.seq <= events[10]!.seq), {
      model: 'claude-test',
      system: 'You are a test agent.',
      tools: third.tools.map(({ cache_control: _c, ...d }: Record<string, unknown>) => d),
      maxTokens: third.max_tokens,
      contextWindowTokens: 200_000,
    });
    expect(rebuilt.params.messages).toEqual(third.messages);
  });

  it('waits for a new message and answers it in the same session', async () => {
    t = await startBrainHost((req) => {
      const last = req.body.messages[req.body.messages.length - 1];
      const text = last.content.map((b: { text?: string }) => b.text ?? '').join('');
      return { blocks: [{ type: 'text', text: `echo: ${text}` }] };
    });
    const id = t.newSession('one');
    await t.settled(id);
    t.host.log.emitEvent(id, { type: 'user.message', content: [{ type: 'text', text: 'two' }] });
    const events = await t.settled(id);
    expect(events.filter((e) => e.type === 'agent.message').map(textOf)).toEqual(['echo: one', 'echo: two']);
    expect(events.filter((e) => e.type === 'session.status_idle')).toHaveLength(2);
  });

  it('lets the model read elided tool results back from the log', async () => {
    const big = 'x'.repeat(9000);
    t = await startBrainHost([
      { blocks: [{ type: 'tool_use', name: 'bash', input: { command: "head -c 9000 /dev/zero | tr '\\0' x" } }] },
      { blocks: [{ type: 'tool_use', name: 'bash', input: { command: "head -c 9000 /dev/zero | tr '\\0' x" } }] },
      { blocks: [{ type: 'tool_use', name: 'read_session_events', input: { types: ['agent.tool_result'], limit: 1 } }] },
      { blocks: [{ type: 'text', text: 'ok' }] },
    ]);
    const id = t.newSession('fill the window', { context_window_tokens: 6000, max_tokens: 1000 });
    const events = await t.settled(id);
    const starts = events.filter((e) => e.type === 'span.model_request_start');
    // By the third request the first big result no longer fits: elided in the request only.
    expect(starts[2]).toMatchObject({ elided_count: 1, elided_through: events.find((e) => e.type === 'agent.tool_result')!.seq });
    const third = JSON.stringify(t.model.requests[2]!.body);
    expect(third).toContain('elided from this request');
    expect(third.length).toBeLessThan(20_000); // 5,000 tokens of budget at 4 characters each
    const stored = events.find((e) => e.type === 'agent.tool_result')!;
    expect(textOf(stored)).toContain(big);
    const readBack = events.filter((e) => e.type === 'agent.tool_result')[2]!;
    expect(textOf(readBack)).toContain('"type":"agent.tool_result"');
  });

  it('a session that outgrows its window even with every result elided drops its oldest turns and goes on', async () => {
    // Tool calls are not elided: twelve calls of 1,500 characters outgrow a 3,000-token window.
    const call = (i: number): Reply => ({ blocks: [{ type: 'text', text: `step ${i}` }, { type: 'tool_use', name: 'bash', input: { command: `echo ${String(i).repeat(1500)} | wc -c` } }] });
    t = await startBrainHost([...Array.from({ length: 12 }, (_, i) => call(i)), { blocks: [{ type: 'text', text: 'done' }] }]);
    const id = t.newSession('keep going', { context_window_tokens: 3000, max_tokens: 500 });
    const events = await t.settled(id);
    expect(events.some((e) => e.type === 'session.error')).toBe(false);
    expect(events.filter((e) => e.type === 'agent.message').map(textOf).at(-1)).toBe('done');
    const starts = events.filter((e) => e.type === 'span.model_request_start');
    const dropped = starts.map((e) => e.dropped_through as number | undefined).filter((d) => d !== undefined);
    expect(dropped.length).toBeGreaterThan(2);
    // The start moves on only: never back to an event it dropped.
    expect(dropped).toEqual([...dropped].sort((a, b) => a - b));
    const last = t.model.requests.at(-1)!.body as { messages: { role: string; content: { text?: string }[] }[] };
    expect(last.messages[0]!.content[0]!.text).toContain(`events 1 to ${dropped.at(-1)} are not in this request`);
    expect(last.messages[1]!.role).toBe('assistant');
    expect(JSON.stringify(last).length / 4).toBeLessThan(3000);
  });

  it('hands a custom tool call to the client (requires_action) and continues with its result', async () => {
    t = await startBrainHost([
      { blocks: [{ type: 'tool_use', name: 'lookup_weather', input: { city: 'Oslo' } }] },
      { blocks: [{ type: 'text', text: 'It is snowing in Oslo.' }] },
    ]);
    const id = t.newSession('weather in Oslo?', {
      tools: [{ type: 'custom', name: 'lookup_weather', description: 'Weather now', input_schema: { type: 'object', properties: { city: { type: 'string' } } } }],
    });
    let events = await t.settled(id);
    const call = events.find((e) => e.type === 'agent.custom_tool_use')!;
    expect(call).toMatchObject({ name: 'lookup_weather', input: { city: 'Oslo' } });
    expect(events.at(-1)).toMatchObject({ type: 'session.status_idle', stop_reason: { type: 'requires_action', event_ids: [call.id] } });
    expect(t.model.requests[0]!.body.tools.map((x: { name: string }) => x.name)).toContain('lookup_weather');
    t.host.log.emitEvent(id, { type: 'user.custom_tool_result', custom_tool_use_id: call.id, content: [{ type: 'text', text: 'snow, -3 C' }] });
    events = await t.settled(id);
    expect(textOf(events.filter((e) => e.type === 'agent.message').at(-1))).toBe('It is snowing in Oslo.');
    const second = t.model.requests[1]!.body;
    expect(second.messages.at(-1).content[0]).toMatchObject({ type: 'tool_result', tool_use_id: call.id });
  });
});
