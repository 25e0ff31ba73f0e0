import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startModelServer, type ModelServer } from '../fixtures/model-server';
import { treeCommands } from '../helpers/processes';
import { BUILT_SERVE, startServe } from '../helpers/serve-process';
import { tmpDir } from '../helpers/tmp';

// `npm run serve` runs the build (out/main/serve.js, the same bundle as the app's), not the
// source under tsx: its paths (the UI's files, the launcher, the brains, the workers) are the
// build's own. The other serve tests start the source.

const root = path.resolve(__dirname, '../..');
let model: ModelServer | undefined;
const children: ChildProcess[] = [];
afterAll(async () => {
  for (const c of children) c.kill('SIGKILL');
  await model?.close();
});

describe('npm run serve', () => {
  it('runs the build: the UI from out/renderer, and a turn whose brain, launcher and tool run from out/main', async () => {
    expect(JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')).scripts.serve).toMatch(/&& node out\/main\/serve\.js$/);
    expect(fs.existsSync(BUILT_SERVE), 'out/main/serve.js is missing: run `npm run build`').toBe(true);
    model = await startModelServer((req) => {
      const last = (req.body.messages as { content: { type: string }[] }[]).at(-1)!;
      if (!last.content.some((b) => b.type === 'tool_result')) return { blocks: [{ type: 'tool_use', name: 'bash', input: { command: 'echo from-the-build' } }] };
      return { blocks: [{ type: 'text', text: 'done' }] };
    });
    const s = await startServe({ dataDir: tmpDir(), children, built: true, env: { ANTHROPIC_BASE_URL: model.url } });

    // The page is the renderer's build, found beside the bundle (out/main/../renderer).
    const page = await fetch(`${s.url}/`);
    expect(page.status).toBe(200);
    expect(await page.text()).toBe(fs.readFileSync(path.join(root, 'out/renderer/index.html'), 'utf8'));
    expect(((await (await fetch(`${s.url}/health`)).json()) as { version: string }).version).toBe(JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')).version);

    const agent = await s.client.beta.agents.create({ name: 'a', model: 'claude-test', tools: [{ type: 'agent_toolset_20260401' }] });
    const env = await s.client.beta.environments.create({ name: 'e', config: { type: 'local' } as never });
    const session = await s.client.beta.sessions.create({
      agent: agent.id,
      environment_id: env.id,
      initial_events: [{ type: 'user.message', content: [{ type: 'text', text: 'run it' }] }],
    });
    // Idle only counts once the turn ran: a new session may read idle before its brain starts (CI-H).
    await expect.poll(() => model!.requests.length, { timeout: 30_000 }).toBe(2);
    let status = '';
    for (let i = 0; i < 300 && status !== 'idle'; i++) {
      await new Promise((r) => setTimeout(r, 100));
      status = (await s.client.beta.sessions.retrieve(session.id)).status;
    }
    expect(status).toBe('idle');
    const results: string[] = [];
    const ready: unknown[] = [];
    for await (const e of s.client.beta.sessions.events.list(session.id)) {
      if (e.type === 'agent.tool_result') results.push(JSON.stringify(e.content));
      if ((e.type as string) === 'hand.ready') ready.push(e);
    }
    expect(results).toHaveLength(1);
    // Sandboxed: the sandbox runtime's thread started from the build's worker file.
    expect(ready).toEqual([expect.objectContaining({ sandbox: { enabled: true, network: expect.any(String) } })]);
    expect(results[0]).toContain('from-the-build');

    // Nothing under serve runs TypeScript: the launcher and the brain are the build's files.
    const commands = treeCommands(s.child.pid!);
    expect(commands.filter((c) => /tsx|\.ts\b/.test(c))).toEqual([]);
    expect(commands.some((c) => c.includes(path.join(root, 'out/main/launcher.js')))).toBe(true);
    expect(commands.some((c) => c.includes(path.join(root, 'out/main/brain-entry.js')))).toBe(true);
    s.child.kill('SIGTERM');
  }, 90_000);
});
