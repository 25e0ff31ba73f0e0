/**
 * bench:brain's lean model server speaks the Messages API's streaming wire format as the real
 * SDK reads it: a `read` call until the request carries `turns` tool results, then a text, and
 * it records each request's session and times.
 */
import Anthropic from '@anthropic-ai/sdk';
import { afterEach, describe, expect, it } from 'vitest';
import { startLeanModelServer } from '../bench/lean-model-server';

describe('bench lean model server', () => {
  let close: (() => Promise<void>) | undefined;
  afterEach(async () => {
    await close?.();
    close = undefined;
  });

  it('streams a tool call, then a text once enough results are in, as the SDK parses them', async () => {
    const server = await startLeanModelServer(1);
    close = server.close;
    const client = new Anthropic({ baseURL: server.url, apiKey: 'bench', maxRetries: 0 });
    const first = await client.messages.stream({ model: 'bench-model', max_tokens: 100, messages: [{ role: 'user', content: 'bench sesn_01ABC' }] }).finalMessage();
    expect(first.stop_reason).toBe('tool_use');
    expect(first.model).toBe('bench-model');
    expect(first.content).toHaveLength(1);
    const call = first.content[0]!;
    expect(call.type === 'tool_use' && call.name).toBe('read');
    expect(call.type === 'tool_use' && call.input).toEqual({ file_path: 'note.txt' });
    const callId = call.type === 'tool_use' ? call.id : '';
    expect(callId).toMatch(/^toolu_/);

    const second = await client.messages
      .stream({
        model: 'bench-model',
        max_tokens: 100,
        messages: [
          { role: 'user', content: 'bench sesn_01ABC' },
          { role: 'assistant', content: first.content },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: callId, content: 'a short note' }] },
        ],
      })
      .finalMessage();
    expect(second.stop_reason).toBe('end_turn');
    expect(second.content.map((b) => (b.type === 'text' ? b.text : b.type))).toEqual(['done']);

    expect(server.timings.map((t) => t.session)).toEqual(['sesn_01ABC', 'sesn_01ABC']);
    for (const t of server.timings) expect(t.finishedHr).toBeGreaterThanOrEqual(t.arrivedHr);
  });

  it('answers another path with a 404 error body', async () => {
    const server = await startLeanModelServer(1);
    close = server.close;
    const res = await fetch(`${server.url}/v1/models`, { method: 'GET' });
    expect(res.status).toBe(404);
    expect(((await res.json()) as { error: { type: string } }).error.type).toBe('not_found_error');
  });
});
