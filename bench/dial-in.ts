/**
 * `npm run bench:dial-in`: the round trip of a tool call through a machine that dials in — from
 * the brain logging `agent.tool_use` to the worker's `user.tool_result` in the log — with `serve`
 * and the official SDK's EnvironmentWorker (bin/corral-worker.mjs) in processes of their own on
 * this machine, p50/p95; and, for comparison, the same calls on a local hand (sandboxed bash).
 */
import type { ChildProcess } from 'node:child_process';
import { startModelServer, type RecordedRequest, type Reply } from '../test/fixtures/model-server';
import { allEvents, endedTurn, killWorker, makeKey, startServe, startWorker } from '../test/helpers/dial-in';
import { tmpDir } from '../test/helpers/tmp';
import { fmt, percentile } from './stats';

const CALLS = Number(process.env.BENCH_CALLS ?? 30);

function script(req: RecordedRequest): Reply {
  const msgs = req.body.messages as { content: string | { type: string }[] }[];
  const results = msgs.flatMap((m) => (typeof m.content === 'string' ? [] : m.content.filter((b) => b.type === 'tool_result'))).length;
  return results < CALLS ? { blocks: [{ type: 'tool_use', name: 'bash', input: { command: 'echo x' } }] } : { blocks: [{ type: 'text', text: 'done' }] };
}

const children: ChildProcess[] = [];
const model = await startModelServer(script);
try {
  const { url, client } = await startServe(tmpDir(), { ANTHROPIC_BASE_URL: model.url, CORRAL_LOG_LEVEL: 'warn' }, children);
  const agent = await client.beta.agents.create({ name: 'bench', model: 'claude-test', tools: [{ type: 'agent_toolset_20260401' }] });
  const remote = await client.beta.environments.create({ name: 'remote', config: { type: 'self_hosted' } as never });
  const local = await client.beta.environments.create({ name: 'local', config: { type: 'local' } as never });
  const { key } = await makeKey(url, remote.id);
  startWorker({ url, environmentId: remote.id, key, workdir: tmpDir('corral-bench-worker-'), workerId: 'bench' }, children);
  for (const [label, env] of [
    ['self-hosted worker', remote.id],
    ['local hand', local.id],
  ] as const) {
    const s = await client.beta.sessions.create({ agent: agent.id, environment_id: env, initial_events: [{ type: 'user.message', content: [{ type: 'text', text: 'go' }] }] } as never);
    await endedTurn(client, s.id, 0, 300_000);
    const log = await allEvents(client, s.id);
    const at = new Map(log.map((e) => [e.id, Date.parse(e.processed_at)]));
    const ms = log.filter((e) => e.type === 'agent.tool_result' || e.type === 'user.tool_result').map((r) => Date.parse(r.processed_at) - at.get(r.tool_use_id)!);
    // The first call of each session includes the wait for a worker to claim it (or for the hand to be provisioned).
    console.log(`${label}: first call ${fmt(ms[0]!)} ms; the next ${ms.length - 1}: p50 ${fmt(percentile(ms.slice(1), 50))} ms, p95 ${fmt(percentile(ms.slice(1), 95))} ms`);
  }
} finally {
  for (const c of children) {
    killWorker(c);
    c.kill('SIGKILL');
  }
  await model.close();
}
