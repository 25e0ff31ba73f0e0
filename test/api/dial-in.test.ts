import { spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startModelServer, type ModelServer, type RecordedRequest, type Reply } from '../fixtures/model-server';
import { allEvents, endedTurn, killWorker, makeKey, startServe, startWorker, textOf, until, type Ev } from '../helpers/dial-in';
import { tmpDir } from '../helpers/tmp';

// Machines that dial in: the official SDK's EnvironmentWorker (through bin/corral-worker.mjs, in
// processes of their own) claims a self_hosted session's work from `serve`, runs the tools and
// answers with user.tool_result; a worker killed mid-command loses its lease.

const LEASE_S = 2;
let model: ModelServer;
const children: ChildProcess[] = [];
let url: string;
let client: Anthropic;
let envId: string;
let key: string;
let agentId: string;
let askAgentId: string;

type Msg = { role: string; content: string | { type: string; text?: string; content?: { text: string }[]; is_error?: boolean }[] };

/** The model: the scenario (first user message) decides the calls; each result moves it one step on. */
function script(req: RecordedRequest): Reply {
  const msgs = req.body.messages as Msg[];
  const first = msgs[0]!.content;
  const scenario = typeof first === 'string' ? first : (first[0]?.text ?? '');
  const results = msgs.flatMap((m) => (typeof m.content === 'string' ? [] : m.content.filter((b) => b.type === 'tool_result')));
  const seen = results.map((r) => `${r.is_error ? 'ERR' : 'OK'}:${(r.content ?? []).map((c) => c.text).join('')}`).join(' | ');
  const bash = (command: string): Reply => ({ blocks: [{ type: 'tool_use', name: 'bash', input: { command } }] });
  if (scenario.startsWith('files')) {
    if (results.length === 0) return bash('echo hello-from-worker > made.txt && cat made.txt');
    if (results.length === 1) return { blocks: [{ type: 'tool_use', name: 'read', input: { file_path: 'made.txt' } }] };
  }
  if (scenario.startsWith('kill')) {
    if (results.length === 0) return bash('echo started >> kill-marks.txt; sleep 30; echo finished >> kill-marks.txt');
    if (results.length === 1) return bash('echo second-call');
  }
  if (scenario.startsWith('interrupt')) {
    if (results.length === 0) return bash('echo started >> int-marks.txt; sleep 29.7; echo finished >> int-marks.txt');
    if (results.length === 1) return bash('echo after-interrupt');
  }
  if (scenario.startsWith('two hands')) {
    // The worker's call first: it is attached (reading the log) while the box's calls are made,
    // in this turn's list and, in the next, live on its stream.
    const on = (hand: string, text: string) => ({ type: 'tool_use' as const, name: 'bash', input: { command: `echo ${text} >> where.txt; cat where.txt`, hand } });
    if (results.length === 0) return { blocks: [on('main', 'on-worker'), on('box', 'on-box')] };
    if (results.length === 2) return { blocks: [on('box', 'box-again')] };
  }
  if (scenario.startsWith('ask') && results.length === 0) return bash('echo asked-and-ran > asked.txt; cat asked.txt');
  return { blocks: [{ type: 'text', text: `saw ${seen}` }] };
}

async function session(text: string, agent = agentId): Promise<string> {
  const s = await client.beta.sessions.create({ agent, environment_id: envId, initial_events: [{ type: 'user.message', content: [{ type: 'text', text }] }] } as never);
  return s.id;
}

async function workItems(): Promise<{ id: string; state: string; data: { id: string }; stop_reason: string | null }[]> {
  // Listing work items takes the environment key (the hosted API rejects the API key there).
  const res = await fetch(`${url}/v1/environments/${envId}/work?limit=100`, { headers: { authorization: `Bearer ${key}` } });
  return ((await res.json()) as { data: never[] }).data;
}

beforeAll(async () => {
  model = await startModelServer(script);
  const serve = await startServe(tmpDir(), { ANTHROPIC_BASE_URL: model.url, CORRAL_WORK_LEASE_TTL_S: String(LEASE_S) }, children);
  url = serve.url;
  client = serve.client;
  envId = (await client.beta.environments.create({ name: 'laptop', config: { type: 'self_hosted' } as never })).id;
  key = (await makeKey(url, envId)).key;
  agentId = (await client.beta.agents.create({ name: 'remote', model: 'claude-test', tools: [{ type: 'agent_toolset_20260401' }] })).id;
  askAgentId = (await client.beta.agents.create({ name: 'asker', model: 'claude-test', tools: [{ type: 'agent_toolset_20260401', default_config: { permission_policy: { type: 'always_ask' } } }] })).id;
}, 60_000);
afterAll(async () => {
  for (const c of children) {
    if (c.pid && c.exitCode === null) killWorker(c);
    c.kill('SIGKILL');
  }
  await model?.close();
});

describe('the official EnvironmentWorker against Corral', () => {
  it('claims a session, runs its tools where it runs, and the session finishes', async () => {
    const workdir = tmpDir('corral-worker-');
    const worker = startWorker({ url, environmentId: envId, key, workdir, workerId: 'worker-a' }, children);
    try {
      const id = await session('files please');
      const log = await endedTurn(client, id);
      const uses = log.filter((e) => e.type === 'agent.tool_use');
      expect(uses.map((u) => u.name)).toEqual(['bash', 'read']);
      // Both answered by the worker (user.tool_result), none by the host.
      const answers = log.filter((e) => e.type === 'user.tool_result' || e.type === 'agent.tool_result');
      expect(answers.map((a) => a.type)).toEqual(['user.tool_result', 'user.tool_result']);
      expect(textOf(answers[0])).toContain('hello-from-worker');
      expect(textOf(answers[1])).toContain('hello-from-worker');
      expect(textOf(log.filter((e) => e.type === 'agent.message').at(-1))).toMatch(/^saw OK:.*hello-from-worker.* \| OK:.*hello-from-worker/);
      // The command ran on the worker's machine, in its workdir.
      expect(fs.readFileSync(path.join(workdir, 'made.txt'), 'utf8')).toBe('hello-from-worker\n');
      // The timeline shows the worker as the session's hand.
      const provisioning = log.find((e) => e.type === 'hand.provisioning')!;
      const ready = log.find((e) => e.type === 'hand.ready')!;
      expect(provisioning).toMatchObject({ hand: 'main', kind: 'self_hosted' });
      expect(ready).toMatchObject({ hand: 'main', kind: 'self_hosted', worker_id: 'worker-a', work_id: provisioning.work_id });
      expect(ready.seq).toBeGreaterThan(provisioning.seq);
      const item = (await workItems()).find((w) => w.data.id === id)!;
      expect(['active', 'stopped']).toContain(item.state);
    } finally {
      killWorker(worker);
    }
  }, 90_000);

  it('kill -9 of a worker mid-command: an honest error once its lease runs out, and a second worker takes the next call', async () => {
    const dirA = tmpDir('corral-worker-a-');
    const dirB = tmpDir('corral-worker-b-');
    const a = startWorker({ url, environmentId: envId, key, workdir: dirA, workerId: 'worker-kill-a' }, children);
    const id = await session('kill me mid-command');
    const use = await until('the sleep to start on worker A', async () => {
      const log = await allEvents(client, id);
      const u = log.find((e) => e.type === 'agent.tool_use');
      return u && fs.existsSync(path.join(dirA, 'kill-marks.txt')) ? u : undefined;
    });
    const firstItem = (await workItems()).find((w) => w.data.id === id)!;
    killWorker(a);
    const killedAt = Date.now();
    startWorker({ url, environmentId: envId, key, workdir: dirB, workerId: 'worker-kill-b' }, children);
    const log = await endedTurn(client, id);
    const answerOf = (u: Ev) => log.find((e) => (e.type === 'agent.tool_result' || e.type === 'user.tool_result') && e.tool_use_id === u.id)!;
    const first = answerOf(use);
    expect(first.type).toBe('agent.tool_result');
    expect(first.is_error).toBe(true);
    expect(textOf(first)).toMatch(/stopped heartbeating: the lease of work item \S+ \(2 s\) ran out/);
    console.log(`kill -9 → honest error after ${Date.parse(first.processed_at ?? first.created_at) - killedAt} ms (lease ${LEASE_S} s)`);
    const uses = log.filter((e) => e.type === 'agent.tool_use');
    expect(uses).toHaveLength(2);
    const second = answerOf(uses[1]!);
    expect(second.type).toBe('user.tool_result');
    expect(textOf(second)).toContain('second-call');
    // Worker B never ran the killed call (the host had answered it), and A never finished it.
    expect(fs.existsSync(path.join(dirB, 'kill-marks.txt'))).toBe(false);
    expect(fs.readFileSync(path.join(dirA, 'kill-marks.txt'), 'utf8')).toBe('started\n');
    expect(log.filter((e) => e.type === 'user.tool_result')).toHaveLength(1);
    const items = (await workItems()).filter((w) => w.data.id === id);
    expect(items.find((w) => w.id === firstItem.id)!.stop_reason).toBe('lease_expired');
    expect(items.length).toBe(2);
    expect(log.some((e) => e.type === 'hand.lost' && e.work_id === firstItem.id)).toBe(true);
    // A late answer from the dead worker's item is refused.
    expect(log.at(-1)!.type).toBe('session.status_idle');
  }, 120_000);

  it('an interrupt stops the command on the worker, and the next turn goes to a fresh claim', async () => {
    const dir = tmpDir('corral-worker-int-');
    const worker = startWorker({ url, environmentId: envId, key, workdir: dir, workerId: 'worker-int' }, children);
    try {
      const id = await session('interrupt me');
      const use = await until('the command to start on the worker', async () => {
        const u = (await allEvents(client, id)).find((e) => e.type === 'agent.tool_use');
        return u && fs.existsSync(path.join(dir, 'int-marks.txt')) ? u : undefined;
      });
      const item = (await workItems()).find((w) => w.data.id === id)!;
      await client.beta.sessions.events.send(id, { events: [{ type: 'user.interrupt' }] });
      const log = await endedTurn(client, id);
      const answer = log.find((e) => e.tool_use_id === use.id)!;
      expect(answer).toMatchObject({ type: 'agent.tool_result', is_error: true });
      expect(textOf(answer)).toMatch(/^Interrupted: the self-hosted worker was told to stop this call/);
      // The worker learns it at its next heartbeat, aborts the command and stops the item.
      await until('the worker to stop the item', async () => (await workItems()).find((w) => w.id === item.id)?.state === 'stopped');
      await until('the command to be killed', async () => spawnSync('pgrep', ['-f', 'sleep 29.7']).status === 1, 15_000);
      expect(fs.readFileSync(path.join(dir, 'int-marks.txt'), 'utf8')).toBe('started\n');
      await client.beta.sessions.events.send(id, { events: [{ type: 'user.message', content: [{ type: 'text', text: 'go on' }] }] });
      const next = await endedTurn(client, id, log.length);
      const second = next.filter((e) => e.type === 'agent.tool_use')[1]!;
      const secondAnswer = next.find((e) => e.tool_use_id === second.id)!;
      expect(secondAnswer.type).toBe('user.tool_result');
      expect(textOf(secondAnswer)).toContain('after-interrupt');
      expect((await workItems()).filter((w) => w.data.id === id)).toHaveLength(2);
    } finally {
      killWorker(worker);
    }
  }, 90_000);

  it('always_ask: the worker runs the call only once the user allows it', async () => {
    const dir = tmpDir('corral-worker-ask-');
    const worker = startWorker({ url, environmentId: envId, key, workdir: dir, workerId: 'worker-ask' }, children);
    try {
      const id = await session('ask first', askAgentId);
      const held = await until('the call to wait for the user', async () => {
        const log = await allEvents(client, id);
        const last = log.at(-1);
        return last?.type === 'session.status_idle' && last.stop_reason?.type === 'requires_action' ? log : undefined;
      });
      const use = held.find((e) => e.type === 'agent.tool_use')!;
      expect(use.evaluated_permission).toBe('ask');
      expect(fs.existsSync(path.join(dir, 'asked.txt'))).toBe(false);
      await client.beta.sessions.events.send(id, { events: [{ type: 'user.tool_confirmation', tool_use_id: use.id, result: 'allow' }] });
      const log = await endedTurn(client, id, held.length);
      const answer = log.find((e) => e.tool_use_id === use.id && e.type !== 'user.tool_confirmation')!;
      expect(answer.type).toBe('user.tool_result');
      expect(textOf(answer)).toContain('asked-and-ran');
      expect(fs.readFileSync(path.join(dir, 'asked.txt'), 'utf8')).toBe('asked-and-ran\n');
    } finally {
      killWorker(worker);
    }
  }, 90_000);

  it('a session with a worker and another hand: the worker runs only the calls meant for it', async () => {
    const dir = tmpDir('corral-worker-two-');
    const worker = startWorker({ url, environmentId: envId, key, workdir: dir, workerId: 'worker-two' }, children);
    try {
      const local = await client.beta.environments.create({ name: 'here', config: { type: 'local' } as never });
      const s = await client.beta.sessions.create({ agent: agentId, environment_id: envId } as never);
      const attach = await fetch(`${url}/v1/sessions/${s.id}/hands`, { method: 'POST', headers: { 'x-api-key': 'serve-key-0123456789-0123456789-0123', 'content-type': 'application/json' }, body: JSON.stringify({ environment_id: local.id, name: 'box' }) });
      expect(attach.status).toBe(200);
      await client.beta.sessions.events.send(s.id, { events: [{ type: 'user.message', content: [{ type: 'text', text: 'two hands' }] }] });
      const log = await endedTurn(client, s.id);
      const [onWorker, onBox, boxAgain] = log.filter((e) => e.type === 'agent.tool_use');
      const answerOf = (u: Ev) => log.filter((e) => (e.type === 'agent.tool_result' || e.type === 'user.tool_result') && e.tool_use_id === u.id);
      expect(answerOf(onBox!).map((a) => a.type)).toEqual(['agent.tool_result']);
      expect(textOf(answerOf(onBox!)[0])).toContain('on-box');
      expect(answerOf(boxAgain!).map((a) => a.type)).toEqual(['agent.tool_result']);
      expect(textOf(answerOf(boxAgain!)[0])).toContain('on-box\nbox-again');
      expect(answerOf(onWorker!).map((a) => a.type)).toEqual(['user.tool_result']);
      expect(textOf(answerOf(onWorker!)[0])).toContain('on-worker');
      expect(fs.readFileSync(path.join(dir, 'where.txt'), 'utf8')).toBe('on-worker\n');
    } finally {
      killWorker(worker);
    }
  }, 90_000);
});
