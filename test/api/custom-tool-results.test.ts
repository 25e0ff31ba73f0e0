import type { ChildProcess } from 'node:child_process';
import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startModelServer, type ModelServer, type RecordedRequest, type Reply } from '../fixtures/model-server';
import { startServe } from '../helpers/serve-process';
import { tmpDir } from '../helpers/tmp';

// `user.custom_tool_result` must answer a custom tool call of the session that has no result yet.
// One naming no call (or a second answer) used to be logged: the next model request then carried
// a tool_result with no tool_use before it (or two results for one call), which the Messages API
// refuses, so the session failed on every request from then on. The scripted model server
// checks requests as the real API does.

let model: ModelServer;
const children: ChildProcess[] = [];
let client: Anthropic;
let agentId: string;
let envId: string;

type Ev = { id: string; type: string; [k: string]: any };

function script(req: RecordedRequest): Reply {
  const msgs = req.body.messages as { content: { type: string }[] | string }[];
  const last = msgs[msgs.length - 1]!.content;
  const answered = typeof last !== 'string' && last.some((b) => b.type === 'tool_result');
  return answered ? { blocks: [{ type: 'text', text: 'thanks' }] } : { blocks: [{ type: 'tool_use', name: 'lookup', input: { q: 'x' } }] };
}

async function events(id: string): Promise<Ev[]> {
  const out: Ev[] = [];
  for await (const e of client.beta.sessions.events.list(id)) out.push(e as Ev);
  return out;
}

async function idle(id: string, after: number, stop: string): Promise<Ev[]> {
  for (let i = 0; i < 400; i++) {
    const log = await events(id);
    const last = log.at(-1);
    if (log.length > after && last?.type === 'session.status_idle' && last.stop_reason?.type === stop) return log;
    if (log.some((e) => e.type === 'session.error')) throw new Error(`session failed: ${JSON.stringify(log.filter((e) => e.type === 'session.error'))}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`no ${stop} idle: ${(await events(id)).map((e) => e.type).join(' ')}`);
}

beforeAll(async () => {
  model = await startModelServer(script);
  client = (await startServe({ dataDir: tmpDir(), children, env: { ANTHROPIC_BASE_URL: model.url } })).client;
  envId = (await client.beta.environments.create({ name: 'e', config: { type: 'local' } as never })).id;
  agentId = (
    await client.beta.agents.create({
      name: 'custom',
      model: 'claude-test',
      tools: [{ type: 'custom', name: 'lookup', description: 'look it up', input_schema: { type: 'object', properties: { q: { type: 'string' } } } }],
    })
  ).id;
}, 60_000);
afterAll(async () => {
  for (const c of children) c.kill('SIGKILL');
  await model?.close();
});

const result = (id: string) => ({ type: 'user.custom_tool_result' as const, custom_tool_use_id: id, content: [{ type: 'text' as const, text: 'found' }] });

describe('user.custom_tool_result', () => {
  it('is refused for an unknown call, a second answer, or twice in one request; the session goes on', async () => {
    const id = (await client.beta.sessions.create({ agent: agentId, environment_id: envId, initial_events: [{ type: 'user.message', content: [{ type: 'text', text: 'go' }] }] } as never)).id;
    const waiting = await idle(id, 0, 'requires_action');
    const call = waiting.find((e) => e.type === 'agent.custom_tool_use')!;
    const user = waiting.find((e) => e.type === 'user.message')!;

    const refused = async (evs: unknown[], match: RegExp) => {
      const err = await client.beta.sessions.events.send(id, { events: evs as never }).catch((e) => e);
      expect(err).toBeInstanceOf(Anthropic.BadRequestError);
      expect(err.error.error.message).toMatch(match);
    };
    await refused([result('sevt_nothing')], /custom_tool_use_id.*not an agent\.custom_tool_use/);
    await refused([result(user.id)], /custom_tool_use_id.*not an agent\.custom_tool_use/);
    await refused([result(call.id), result(call.id)], /answered twice/);
    expect((await events(id)).filter((e) => e.type === 'user.custom_tool_result')).toHaveLength(0);

    await client.beta.sessions.events.send(id, { events: [result(call.id)] });
    const done = await idle(id, waiting.length, 'end_turn');
    expect(done.filter((e) => e.type === 'agent.message').at(-1)!.content[0].text).toBe('thanks');

    await refused([result(call.id)], /already answered/);
    // A new message still gets a valid request (no stray tool_result in the transcript).
    await client.beta.sessions.events.send(id, { events: [{ type: 'user.message', content: [{ type: 'text', text: 'again' }] }] });
    const after = await idle(id, done.length + 1, 'requires_action');
    expect(after.some((e) => e.type === 'session.error')).toBe(false);
  }, 60_000);
});
