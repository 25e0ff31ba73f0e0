import fs from 'node:fs';
import path from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import { expect, test } from '@playwright/test';

const client = new Anthropic({ apiKey: process.env.E2E_API_KEY!, baseURL: process.env.E2E_BASE_URL!, maxRetries: 0 });

test('through serve and client.beta.sessions: "create hello.txt and show me it" streams to idle with a real file', async () => {
  const agent = await client.beta.agents.create({
    name: 'file-writer',
    model: 'claude-test',
    system: 'You write files when asked.',
    tools: [{ type: 'agent_toolset_20260401' }],
  });
  const env = await client.beta.environments.create({ name: 'here', config: { type: 'local' } as never });
  const session = await client.beta.sessions.create({ agent: agent.id, environment_id: env.id, title: 'sdk e2e' });

  // Open the stream first, then send: every event of the turn arrives on it.
  const stream = await client.beta.sessions.events.stream(session.id);
  await client.beta.sessions.events.send(session.id, {
    events: [{ type: 'user.message', content: [{ type: 'text', text: 'create hello.txt and show me it' }] }],
  });
  const seen: Anthropic.Beta.Sessions.Events.BetaManagedAgentsStreamSessionEvents[] = [];
  for await (const event of stream) {
    seen.push(event);
    if (event.type === 'session.status_idle') break;
  }
  const types = seen.map((e) => e.type);
  expect(types[0]).toBe('user.message');
  expect(types).toContain('session.status_running');
  expect(types.filter((t) => t === 'agent.tool_use')).toHaveLength(2);
  expect(types.filter((t) => t === 'agent.tool_result')).toHaveLength(2);
  const idle = seen[seen.length - 1] as Anthropic.Beta.Sessions.Events.BetaManagedAgentsSessionStatusIdleEvent;
  expect(idle.stop_reason).toEqual({ type: 'end_turn' });
  const uses = seen.filter((e): e is Anthropic.Beta.Sessions.Events.BetaManagedAgentsAgentToolUseEvent => e.type === 'agent.tool_use');
  expect(uses.map((u) => u.name)).toEqual(['write', 'bash']);
  const results = seen.filter((e): e is Anthropic.Beta.Sessions.Events.BetaManagedAgentsAgentToolResultEvent => e.type === 'agent.tool_result');
  expect(results.map((r) => r.tool_use_id)).toEqual(uses.map((u) => u.id));
  expect(JSON.stringify(results[1]!.content)).toContain('hello from corral');
  const answer = seen.filter((e) => e.type === 'agent.message').pop() as Anthropic.Beta.Sessions.Events.BetaManagedAgentsAgentMessageEvent;
  expect((answer.content[0] as { text: string }).text).toContain('hello from corral');
  const ends = seen.filter((e): e is Anthropic.Beta.Sessions.Events.BetaManagedAgentsSpanModelRequestEndEvent => e.type === 'span.model_request_end');
  expect(ends).toHaveLength(3);
  expect(ends.every((e) => e.model_usage.input_tokens > 0)).toBe(true);

  // A real file, written by the real write tool in the session's work folder.
  expect(fs.readFileSync(path.join(process.env.E2E_WORK!, session.id, 'hello.txt'), 'utf8')).toBe('hello from corral\n');
  const after = await client.beta.sessions.retrieve(session.id);
  expect(after.status).toBe('idle');
  expect(after.usage.output_tokens).toBeGreaterThan(0);
});
