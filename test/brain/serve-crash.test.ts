import type { ChildProcess } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';
import { startModelServer, type ModelServer } from '../fixtures/model-server';
import { killServeHost } from '../helpers/serve-kill';
import { startServe as startServeProcess } from '../helpers/serve-process';
import { tmpDir } from '../helpers/tmp';

let model: ModelServer;
const children: ChildProcess[] = [];
afterAll(async () => {
  for (const c of children) c.kill('SIGKILL');
  await model?.close();
});

const startServe = (dataDir: string) => startServeProcess({ dataDir, children, env: { ANTHROPIC_BASE_URL: model.url } });

describe('kill -9 of the whole serve process mid-turn', () => {
  it('resumes the session by itself after a restart', async () => {
    let answered = 0;
    model = await startModelServer((req) => {
      const msgs = req.body.messages as { content: { type: string }[] }[];
      if (!msgs[msgs.length - 1]!.content.some((b) => b.type === 'tool_result')) {
        return { blocks: [{ type: 'tool_use', name: 'write', input: { file_path: 'note.txt', content: 'x' } }], firstTokenDelayMs: answered++ === 0 ? 3000 : 0 };
      }
      return { blocks: [{ type: 'text', text: 'finished after the crash' }] };
    });
    const dataDir = tmpDir();
    const first = await startServe(dataDir);
    const client = first.client;
    const agent = await client.beta.agents.create({ name: 'a', model: 'claude-test', tools: [{ type: 'agent_toolset_20260401' }] });
    const env = await client.beta.environments.create({ name: 'e', config: { type: 'local' } as never });
    const session = await client.beta.sessions.create({
      agent: agent.id,
      environment_id: env.id,
      initial_events: [{ type: 'user.message', content: [{ type: 'text', text: 'write a note' }] }],
    });
    while (model.requests.length === 0) await new Promise((r) => setTimeout(r, 20));
    await killServeHost(dataDir, first.child);

    const second = await startServe(dataDir);
    const client2 = second.client;
    let status = '';
    for (let i = 0; i < 300 && status !== 'idle'; i++) {
      await new Promise((r) => setTimeout(r, 100));
      status = (await client2.beta.sessions.retrieve(session.id)).status;
    }
    expect(status).toBe('idle');
    const types: string[] = [];
    const texts: string[] = [];
    for await (const e of client2.beta.sessions.events.list(session.id)) {
      types.push(e.type);
      if (e.type === 'agent.message') texts.push((e.content[0] as { text: string }).text);
    }
    expect(texts).toEqual(['finished after the crash']);
    expect(types.filter((x) => x === 'agent.tool_use')).toHaveLength(1);
    expect(types.filter((x) => x === 'agent.tool_result')).toHaveLength(1);
    expect(types.filter((x) => x === 'span.model_request_start').length).toBe(types.filter((x) => x === 'span.model_request_end').length);
    second.child.kill('SIGTERM');
  }, 90_000);
});
