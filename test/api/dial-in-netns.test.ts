import { spawnSync, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import type Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startModelServer, type ModelServer, type RecordedRequest, type Reply } from '../fixtures/model-server';
import { endedTurn, killWorker, makeKey, root, startServe, startWorker, textOf } from '../helpers/dial-in';
import { tmpDir } from '../helpers/tmp';

// A worker on a machine Corral cannot reach: the official EnvironmentWorker runs inside a
// network namespace whose firewall lets in only replies to connections opened from inside
// (test/hands-env/worker-ns.sh), and dials out to `serve` on the veth pair's host address.

const script_ = path.join(root, 'test/hands-env/worker-ns.sh');
const ns = spawnSync('bash', [script_, 'start'], { encoding: 'utf8' });
const available = ns.status === 0;
const [HOST_ADDR, NS_ADDR] = ['10.204.0.1', '10.204.0.2'];
let model: ModelServer;
const children: ChildProcess[] = [];
let url: string;
let client: Anthropic;

function script(req: RecordedRequest): Reply {
  const msgs = req.body.messages as { content: string | { type: string; content?: { text: string }[] }[] }[];
  const results = msgs.flatMap((m) => (typeof m.content === 'string' ? [] : m.content.filter((b) => b.type === 'tool_result')));
  if (results.length === 0) return { blocks: [{ type: 'tool_use', name: 'bash', input: { command: 'ip -o -4 addr show; echo ran-inside > inside.txt' } }] };
  return { blocks: [{ type: 'text', text: `saw ${results.map((r) => (r.content ?? []).map((c) => c.text).join('')).join(' | ')}` }] };
}

beforeAll(async () => {
  if (!available) return;
  model = await startModelServer(script);
  const serve = await startServe(tmpDir(), { ANTHROPIC_BASE_URL: model.url }, children, ['--host', HOST_ADDR, '--allowed-hosts', HOST_ADDR]);
  url = serve.url;
  client = serve.client;
}, 60_000);
afterAll(async () => {
  for (const c of children) {
    killWorker(c);
    c.kill('SIGKILL');
  }
  await model?.close();
  if (available) spawnSync('bash', [script_, 'stop']);
});

describe.skipIf(!available)(`a worker behind a one-way firewall${available ? '' : ` (skipped: ${ns.stderr.trim()})`}`, () => {
  it('nothing can connect into its namespace', async () => {
    const outcome = await new Promise<string>((resolve) => {
      const s = net.connect({ host: NS_ADDR, port: 9 });
      s.setTimeout(1500, () => {
        s.destroy();
        resolve('no answer');
      });
      s.once('connect', () => resolve('connected'));
      s.once('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? 'error'));
    });
    // A listener-less port would refuse; the firewall drops the attempt instead.
    expect(outcome).toBe('no answer');
  });

  it("claims the session's work by dialling out, runs the tools inside, and the session finishes", async () => {
    const env = await client.beta.environments.create({ name: 'behind-nat', config: { type: 'self_hosted' } as never });
    const { key } = await makeKey(url, env.id);
    const agent = await client.beta.agents.create({ name: 'nat', model: 'claude-test', tools: [{ type: 'agent_toolset_20260401' }] });
    const workdir = tmpDir('corral-worker-ns-');
    const worker = startWorker({ url, environmentId: env.id, key, workdir, workerId: 'behind-nat', prefix: ['ip', 'netns', 'exec', 'corral-wns'] }, children);
    try {
      const s = await client.beta.sessions.create({ agent: agent.id, environment_id: env.id, initial_events: [{ type: 'user.message', content: [{ type: 'text', text: 'run inside' }] }] } as never);
      const log = await endedTurn(client, s.id);
      const answer = log.find((e) => e.type === 'user.tool_result')!;
      expect(answer.is_error).toBe(false);
      // The command saw the namespace's address, not the host's loopback-only world.
      expect(textOf(answer)).toContain(`inet ${NS_ADDR}/30`);
      expect(textOf(log.filter((e) => e.type === 'agent.message').at(-1))).toContain(NS_ADDR);
    } finally {
      killWorker(worker);
    }
  }, 90_000);
});
