import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import readline from 'node:readline';
import Anthropic from '@anthropic-ai/sdk';
import { afterAll, describe, expect, it } from 'vitest';
import { startModelServer, type ModelServer } from '../fixtures/model-server';
import { killServeHost } from '../helpers/serve-kill';
import { tmpDir } from '../helpers/tmp';

const root = path.resolve(__dirname, '../..');
let model: ModelServer;
const children: ChildProcess[] = [];
afterAll(async () => {
  for (const c of children) c.kill('SIGKILL');
  await model?.close();
});

/** Starts `serve` as its own process and resolves with its base URL. */
function startServe(dataDir: string): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(root, 'main/serve.ts'), '--port', '0', '--data', dataDir], {
    cwd: root,
    env: { ...process.env, CORRAL_API_KEY: 'serve-key-0123456789-0123456789-0123', ANTHROPIC_BASE_URL: model.url, ANTHROPIC_API_KEY: 'model-key', CORRAL_RETRY_BASE_MS: '20' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  children.push(child);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('serve did not start')), 30_000);
    readline.createInterface({ input: child.stdout! }).on('line', (line) => {
      const m = /API at (http:\/\/\S+)\/v1/.exec(line);
      if (m) {
        clearTimeout(timer);
        resolve({ child, url: m[1]! });
      }
    });
    child.once('exit', (code) => reject(new Error(`serve exited with ${code}`)));
  });
}

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
    const client = new Anthropic({ apiKey: 'serve-key-0123456789-0123456789-0123', baseURL: first.url, maxRetries: 0 });
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
    const client2 = new Anthropic({ apiKey: 'serve-key-0123456789-0123456789-0123', baseURL: second.url, maxRetries: 0 });
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
