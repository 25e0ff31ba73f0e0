import type { ChildProcess } from 'node:child_process';
import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startModelServer, type ModelServer, type RecordedRequest, type Reply } from '../fixtures/model-server';
import { killServeHost } from '../helpers/serve-kill';
import { startServe as startServeProcess } from '../helpers/serve-process';
import { tmpDir } from '../helpers/tmp';

// Tool permissions as a client of the hosted API uses them: the official SDK against `serve`
// (its own process, real brains) and the scripted model server.

let model: ModelServer;
const children: ChildProcess[] = [];

type Msg = { role: string; content: string | { type: string; text?: string; tool_use_id?: string; content?: { text: string }[]; is_error?: boolean }[] };
const firstText = (req: RecordedRequest) => {
  const c = (req.body.messages as Msg[])[0]!.content;
  return typeof c === 'string' ? c : (c[0]?.text ?? '');
};

/** The model: each scenario (the first user message) makes its calls, then reports what it saw. */
function script(req: RecordedRequest): Reply {
  const msgs = req.body.messages as Msg[];
  const last = msgs[msgs.length - 1]!;
  const results = typeof last.content === 'string' ? [] : last.content.filter((b) => b.type === 'tool_result');
  if (results.length > 0) {
    const seen = results.map((r) => `${r.is_error ? 'ERR' : 'OK'}:${(r.content ?? []).map((c) => c.text).join('')}`).join(' | ');
    return { blocks: [{ type: 'text', text: `saw ${seen}` }] };
  }
  const scenario = firstText(req);
  const bash = (command: string) => ({ type: 'tool_use' as const, name: 'bash', input: { command } });
  if (scenario.startsWith('three')) return { blocks: [bash('echo one'), bash('echo two'), bash('echo three')] };
  if (scenario.startsWith('disabled')) return { blocks: [{ type: 'tool_use', name: 'bash', input: { command: 'echo should-not-run' } }] };
  if (scenario.startsWith('crash')) return { blocks: [bash('echo ran >> runs.log; wc -l < runs.log')] };
  return { blocks: [bash(`echo ${scenario.replace(/\W/g, '')}-ran`)] };
}

const startServe = (dataDir: string) => startServeProcess({ dataDir, children, env: { ANTHROPIC_BASE_URL: model.url } });

type Ev = { id: string; type: string; [k: string]: any };
async function events(client: Anthropic, id: string): Promise<Ev[]> {
  const out: Ev[] = [];
  for await (const e of client.beta.sessions.events.list(id)) out.push(e as Ev);
  return out;
}

/** Waits until the log's last event is an idle whose stop reason satisfies `ok`. */
async function idleWith(client: Anthropic, id: string, ok: (stop: { type: string; event_ids?: string[] }) => boolean, after = 0): Promise<Ev[]> {
  for (let i = 0; i < 400; i++) {
    const log = await events(client, id);
    const lastIdle = [...log].reverse().find((e) => e.type === 'session.status_idle');
    const settled = log.length > after && log.at(-1)?.type === 'session.status_idle';
    if (settled && lastIdle && ok(lastIdle.stop_reason)) return log;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`session ${id} did not reach the expected idle: ${(await events(client, id)).map((e) => e.type).join(' ')}`);
}
const waiting = (stop: { type: string }) => stop.type === 'requires_action';
const ended = (stop: { type: string }) => stop.type === 'end_turn';

let serve: { child: ChildProcess; client: Anthropic };
let client: Anthropic;
let envId: string;
let askAgent: string;
const dataDir = tmpDir();

async function session(text: string, agent = askAgent): Promise<string> {
  const s = await client.beta.sessions.create({ agent, environment_id: envId, initial_events: [{ type: 'user.message', content: [{ type: 'text', text }] }] } as never);
  return s.id;
}
const resultOf = (log: Ev[], useId: string) => log.find((e) => e.type === 'agent.tool_result' && e.tool_use_id === useId);
const textOf = (e: Ev | undefined) => (e?.content as { text: string }[] | undefined)?.map((c) => c.text).join('') ?? '';

beforeAll(async () => {
  model = await startModelServer(script);
  serve = await startServe(dataDir);
  client = serve.client;
  const env = await client.beta.environments.create({ name: 'e', config: { type: 'local' } as never });
  envId = env.id;
  const agent = await client.beta.agents.create({
    name: 'asker',
    model: 'claude-test',
    tools: [{ type: 'agent_toolset_20260401', default_config: { permission_policy: { type: 'always_ask' } } }],
  });
  askAgent = agent.id;
}, 60_000);
afterAll(async () => {
  for (const c of children) c.kill('SIGKILL');
  await model?.close();
});

describe('always_ask through the official SDK', () => {
  it('holds the call until it is allowed, then runs it', async () => {
    const id = await session('allow me');
    const log = await idleWith(client, id, waiting);
    const use = log.find((e) => e.type === 'agent.tool_use')!;
    expect(use.evaluated_permission).toBe('ask');
    expect(use.evaluation).toEqual({ type: 'always_ask' });
    expect(log.at(-1)!.stop_reason).toEqual({ type: 'requires_action', event_ids: [use.id] });
    expect(resultOf(log, use.id)).toBeUndefined();
    await client.beta.sessions.events.send(id, { events: [{ type: 'user.tool_confirmation', tool_use_id: use.id, result: 'allow' }] });
    const done = await idleWith(client, id, ended, log.length);
    const result = resultOf(done, use.id)!;
    expect(result.is_error).toBe(false);
    expect(textOf(result)).toContain('allowme-ran');
    expect(textOf(done.filter((e) => e.type === 'agent.message').at(-1))).toContain('OK:allowme-ran');
  }, 60_000);

  it('answers a denied call with the reason, which the model sees', async () => {
    const id = await session('deny me');
    const log = await idleWith(client, id, waiting);
    const use = log.find((e) => e.type === 'agent.tool_use')!;
    await client.beta.sessions.events.send(id, { events: [{ type: 'user.tool_confirmation', tool_use_id: use.id, result: 'deny', deny_message: 'not on my machine' }] });
    const done = await idleWith(client, id, ended, log.length);
    const result = resultOf(done, use.id)!;
    expect(result.is_error).toBe(true);
    expect(textOf(result)).toContain('not on my machine');
    expect(textOf(result)).not.toContain('denyme-ran');
    const reply = textOf(done.filter((e) => e.type === 'agent.message').at(-1));
    expect(reply).toContain('ERR:');
    expect(reply).toContain('not on my machine');
  }, 60_000);

  it('takes three calls confirmed one by one in a mixed order, then continues the turn', async () => {
    const id = await session('three calls');
    let log = await idleWith(client, id, waiting);
    const uses = log.filter((e) => e.type === 'agent.tool_use');
    expect(uses).toHaveLength(3);
    expect(log.at(-1)!.stop_reason.event_ids).toEqual(uses.map((u) => u.id));
    const requestsBefore = model.requests.length;
    // Third allowed, first denied, second allowed: each answer leaves the rest waiting.
    const order: [number, 'allow' | 'deny'][] = [
      [2, 'allow'],
      [0, 'deny'],
      [1, 'allow'],
    ];
    const left = new Set(uses.map((u) => u.id));
    for (const [i, result] of order) {
      await client.beta.sessions.events.send(id, { events: [{ type: 'user.tool_confirmation', tool_use_id: uses[i]!.id, result }] });
      left.delete(uses[i]!.id);
      if (left.size > 0) {
        log = await idleWith(client, id, (s) => waiting(s) && s.event_ids!.length === left.size, log.length);
        expect(log.at(-1)!.stop_reason.event_ids).toEqual(uses.filter((u) => left.has(u.id)).map((u) => u.id));
        expect(model.requests.length).toBe(requestsBefore); // no model request while calls wait
      }
    }
    const done = await idleWith(client, id, ended, log.length);
    expect(textOf(resultOf(done, uses[2]!.id))).toContain('three');
    expect(resultOf(done, uses[0]!.id)!.is_error).toBe(true);
    expect(textOf(resultOf(done, uses[1]!.id))).toContain('two');
    expect(model.requests.length).toBe(requestsBefore + 1);
    const reply = textOf(done.filter((e) => e.type === 'agent.message').at(-1));
    expect(reply.split(' | ')).toHaveLength(3);
  }, 90_000);

  it('refuses confirmations that answer nothing with 400, leaving the log unchanged', async () => {
    const id = await session('bad confirmations');
    const log = await idleWith(client, id, waiting);
    const use = log.find((e) => e.type === 'agent.tool_use')!;
    const message = log.find((e) => e.type === 'user.message')!;
    const bad = [
      { tool_use_id: 'sevt_00000000000000000000000000', result: 'allow', why: /not a tool call/ },
      { tool_use_id: message.id, result: 'allow', why: /not a tool call/ },
      { tool_use_id: use.id, result: 'allow', deny_message: 'no', why: /deny_message/ },
    ];
    for (const b of bad) {
      const { why, ...event } = b;
      const err = await client.beta.sessions.events.send(id, { events: [{ type: 'user.tool_confirmation', ...event } as never] }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(Anthropic.BadRequestError);
      expect((err as Error).message).toMatch(why);
    }
    // Twice in one request: refused as a whole.
    const twice = await client.beta.sessions.events
      .send(id, { events: [{ type: 'user.tool_confirmation', tool_use_id: use.id, result: 'allow' }, { type: 'user.tool_confirmation', tool_use_id: use.id, result: 'deny' }] })
      .catch((e: unknown) => e);
    expect(twice).toBeInstanceOf(Anthropic.BadRequestError);
    expect(await events(client, id)).toEqual(log);
    // Answered once; a second answer is refused, and so is one for a call that was never held.
    await client.beta.sessions.events.send(id, { events: [{ type: 'user.tool_confirmation', tool_use_id: use.id, result: 'deny' }] });
    const done = await idleWith(client, id, ended, log.length);
    const again = await client.beta.sessions.events.send(id, { events: [{ type: 'user.tool_confirmation', tool_use_id: use.id, result: 'allow' }] }).catch((e: unknown) => e);
    expect(again).toBeInstanceOf(Anthropic.BadRequestError);
    expect((again as Error).message).toMatch(/already denied/);
    expect(await events(client, id)).toEqual(done);

    const allowAgent = await client.beta.agents.create({ name: 'allower', model: 'claude-test', tools: [{ type: 'agent_toolset_20260401' }] });
    const id2 = await session('allowed call', allowAgent.id);
    const log2 = await idleWith(client, id2, ended);
    const use2 = log2.find((e) => e.type === 'agent.tool_use')!;
    expect(use2.evaluated_permission).toBe('allow');
    const notHeld = await client.beta.sessions.events.send(id2, { events: [{ type: 'user.tool_confirmation', tool_use_id: use2.id, result: 'allow' }] }).catch((e: unknown) => e);
    expect(notHeld).toBeInstanceOf(Anthropic.BadRequestError);
    expect((notHeld as Error).message).toMatch(/not waiting for confirmation/);
    expect(await events(client, id2)).toEqual(log2);
  }, 90_000);

  it('answers waiting calls "not run" when the session is interrupted', async () => {
    const id = await session('interrupt me');
    const log = await idleWith(client, id, waiting);
    const use = log.find((e) => e.type === 'agent.tool_use')!;
    await client.beta.sessions.events.send(id, { events: [{ type: 'user.interrupt' }] });
    const done = await idleWith(client, id, ended, log.length + 1);
    const result = resultOf(done, use.id)!;
    expect(result.is_error).toBe(true);
    expect(textOf(result)).toMatch(/Not run: the session was interrupted/);
    const late = await client.beta.sessions.events.send(id, { events: [{ type: 'user.tool_confirmation', tool_use_id: use.id, result: 'allow' }] }).catch((e: unknown) => e);
    expect(late).toBeInstanceOf(Anthropic.BadRequestError);
  }, 60_000);

  it('never offers or runs a tool the agent does not enable', async () => {
    const agent = await client.beta.agents.create({
      name: 'no-bash',
      model: 'claude-test',
      tools: [{ type: 'agent_toolset_20260401', configs: [{ name: 'bash', enabled: false }] }],
    });
    const before = model.requests.length;
    const id = await session('disabled tool', agent.id);
    const log = await idleWith(client, id, ended);
    const offered = (model.requests[before]!.body.tools as { name: string }[]).map((t) => t.name);
    expect(offered).not.toContain('bash');
    expect(offered).toContain('read');
    const use = log.find((e) => e.type === 'agent.tool_use')!;
    expect(use.evaluated_permission).toBe('deny');
    const result = resultOf(log, use.id)!;
    expect(result.is_error).toBe(true);
    expect(textOf(result)).toMatch(/not available/);
    expect(textOf(result)).not.toContain('should-not-run');
  }, 60_000);

  it("refuses the 'auto' policy with a 400 naming it", async () => {
    const err = await client.beta.agents
      .create({ name: 'auto', model: 'claude-test', tools: [{ type: 'agent_toolset_20260401', default_config: { permission_policy: { type: 'auto' } } }] } as never)
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Anthropic.BadRequestError);
    expect((err as Error).message).toMatch(/'auto' is not supported/);
  });
});

describe('a call waiting for the user survives kill -9 of the host', () => {
  it('runs once when confirmed after the restart', async () => {
    const id = await session('crash while waiting');
    const log = await idleWith(client, id, waiting);
    const use = log.find((e) => e.type === 'agent.tool_use')!;
    await killServeHost(dataDir, serve.child);
    serve = await startServe(dataDir);
    client = serve.client;
    // Still waiting after the restart, with nothing run.
    const after = await idleWith(client, id, waiting);
    expect(resultOf(after, use.id)).toBeUndefined();
    await client.beta.sessions.events.send(id, { events: [{ type: 'user.tool_confirmation', tool_use_id: use.id, result: 'allow' }] });
    const done = await idleWith(client, id, ended, after.length);
    const results = done.filter((e) => e.type === 'agent.tool_result' && e.tool_use_id === use.id);
    expect(results).toHaveLength(1);
    expect(textOf(results[0]).split('\n')[0]!.trim()).toBe('1'); // runs.log has one line: it ran once
    expect(done.filter((e) => e.type === 'session.status_running' && e.run_confirmed === use.id)).toHaveLength(1);
  }, 90_000);
});
