import type { ChildProcess } from 'node:child_process';
import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startModelServer, type ModelServer, type RecordedRequest, type Reply } from '../fixtures/model-server';
import { allEvents, endedTurn, makeKey, startServe, textOf, until } from '../helpers/dial-in';
import { tmpDir } from '../helpers/tmp';

// The work protocol itself, through the official SDK's `work` client and WorkPoller against
// `serve`: racing pollers, credentials that must not reach further than they should, heartbeat
// preconditions, and the session side (user.tool_result) as a worker speaks it.

let model: ModelServer;
const children: ChildProcess[] = [];
let url: string;
let client: Anthropic;
let envA: string;
let envB: string;
let keyA: string;
let agentId: string;

function script(req: RecordedRequest): Reply {
  const msgs = req.body.messages as { content: string | { type: string }[] }[];
  const answered = msgs.some((m) => typeof m.content !== 'string' && m.content.some((b) => b.type === 'tool_result'));
  return answered ? { blocks: [{ type: 'text', text: 'done' }] } : { blocks: [{ type: 'tool_use', name: 'bash', input: { command: 'echo hi' } }] };
}

const asWorker = (credential: string) => new Anthropic({ baseURL: url, apiKey: null, authToken: credential, maxRetries: 0 });
const tokenOf = (secret: string) => (JSON.parse(Buffer.from(secret, 'base64url').toString('utf8')) as { sessions_token: string }).sessions_token;
const post = (path: string, body: unknown = {}) => fetch(`${url}${path}`, { method: 'POST', headers: { 'x-api-key': 'serve-key-0123456789-0123456789-0123', 'content-type': 'application/json' }, body: JSON.stringify(body) });

beforeAll(async () => {
  model = await startModelServer(script);
  const serve = await startServe(tmpDir(), { ANTHROPIC_BASE_URL: model.url, CORRAL_WORK_LEASE_TTL_S: '30' }, children);
  url = serve.url;
  client = serve.client;
  envA = (await client.beta.environments.create({ name: 'a', config: { type: 'self_hosted' } as never })).id;
  envB = (await client.beta.environments.create({ name: 'b', config: { type: 'self_hosted' } as never })).id;
  keyA = (await makeKey(url, envA)).key;
  agentId = (await client.beta.agents.create({ name: 'remote', model: 'claude-test', tools: [{ type: 'agent_toolset_20260401' }] })).id;
}, 60_000);
afterAll(async () => {
  for (const c of children) c.kill('SIGKILL');
  await model?.close();
});

describe('the work queue', () => {
  it('two pollers racing over many items never both get one, and every item is taken', async () => {
    const N = 40;
    const queued: string[] = [];
    for (let i = 0; i < N; i++) queued.push(((await (await post(`/v1/environments/${envA}/work/healthcheck`)).json()) as { id: string }).id);
    const drain = async (workerId: string) => {
      const got: string[] = [];
      for await (const w of asWorker(keyA).beta.environments.work.poller({ environmentId: envA, environmentKey: keyA, drain: true, workerId })) got.push(w.id);
      return got;
    };
    const [one, two] = await Promise.all([drain('racer-1'), drain('racer-2')]);
    expect(one.filter((id) => two.includes(id))).toEqual([]);
    expect([...one, ...two].sort()).toEqual([...queued].sort());
    console.log(`race: ${one.length} + ${two.length} items of ${N}`);
    // The poller stopped each item after its body ran.
    const list = await asWorker(keyA).beta.environments.work.list(envA, { limit: 100 });
    expect(list.data.filter((w) => queued.includes(w.id)).every((w) => w.state === 'stopped')).toBe(true);
    const stats = await client.beta.environments.work.stats(envA);
    expect(stats).toMatchObject({ type: 'work_queue_stats', depth: 0, pending: 0 });
    expect(stats.workers_polling).toBeGreaterThanOrEqual(2);
  }, 60_000);
});

describe('credentials', () => {
  it('an environment key reaches its own environment only, and a revoked key nothing', async () => {
    const w = asWorker(keyA);
    await expect(w.beta.environments.work.poll(envB)).rejects.toBeInstanceOf(Anthropic.PermissionDeniedError);
    await expect(w.beta.sessions.list()).rejects.toBeInstanceOf(Anthropic.PermissionDeniedError);
    await expect(w.beta.environments.retrieve(envA)).rejects.toBeInstanceOf(Anthropic.PermissionDeniedError);
    expect(await w.beta.environments.work.poll(envA)).toBeNull();
    const spare = await makeKey(url, envA);
    expect(await asWorker(spare.key).beta.environments.work.poll(envA)).toBeNull();
    expect((await post(`/v1/environments/${envA}/keys/${spare.id}/revoke`)).status).toBe(200);
    await expect(asWorker(spare.key).beta.environments.work.poll(envA)).rejects.toBeInstanceOf(Anthropic.AuthenticationError);
    // Keys exist only for self_hosted environments, and the list never shows a value.
    const local = await client.beta.environments.create({ name: 'l', config: { type: 'local' } as never });
    expect((await post(`/v1/environments/${local.id}/keys`)).status).toBe(400);
    const keys = (await (await fetch(`${url}/v1/environments/${envA}/keys`, { headers: { 'x-api-key': 'serve-key-0123456789-0123456789-0123' } })).json()) as { data: Record<string, unknown>[] };
    expect(keys.data.length).toBe(2);
    expect(keys.data.every((k) => !('key' in k))).toBe(true);
  });

  it('each work endpoint takes the credential the hosted API documents: poll, list, ack and heartbeat refuse the API key; retrieve, update and stats refuse the environment key', async () => {
    const item = (await (await post(`/v1/environments/${envB}/work/healthcheck`)).json()) as { id: string };
    const keyB = (await makeKey(url, envB)).key;
    const refused = async (p: Promise<unknown>) => {
      const err = await p.catch((e: unknown) => e);
      expect(err).toBeInstanceOf(Anthropic.PermissionDeniedError);
      expect((err as { error: { type: string; error: { type: string; message: string } } }).error).toMatchObject({ type: 'error', error: { type: 'permission_error' } });
      return (err as { error: { error: { message: string } } }).error.error.message;
    };
    // The owner's key: not a worker's.
    expect(await refused(client.beta.environments.work.poll(envB))).toMatch(/polling for work .*rejects the API key/);
    expect(await refused(client.beta.environments.work.list(envB))).toMatch(/listing work items .*rejects the API key/);
    expect(await refused(client.beta.environments.work.ack(item.id, { environment_id: envB }))).toMatch(/rejects the API key/);
    expect(await refused(client.beta.environments.work.heartbeat(item.id, { environment_id: envB }))).toMatch(/rejects the API key/);
    // Refused before anything happened: the item is still queued and was never handed out.
    const w = asWorker(keyB).beta.environments.work;
    expect(await refused(w.retrieve(item.id, { environment_id: envB }))).toMatch(/needs the API key/);
    expect(await refused(w.update(item.id, { environment_id: envB, metadata: { a: 'b' } }))).toMatch(/needs the API key/);
    expect(await refused(w.stats(envB))).toMatch(/needs the API key/);
    expect(await client.beta.environments.work.retrieve(item.id, { environment_id: envB })).toMatchObject({ state: 'queued', acknowledged_at: null, metadata: {} });
    // The worker's own calls go through with its key; stop takes either.
    expect((await w.list(envB)).data.map((x) => x.id)).toContain(item.id);
    const got = await w.poll(envB);
    expect(got?.id).toBe(item.id);
    await w.ack(item.id, { environment_id: envB });
    expect(await client.beta.environments.work.stop(item.id, { environment_id: envB, force: true } as never)).toMatchObject({ state: 'stopped' });
  });

  it("a work secret reaches its own item and session only; heartbeats need the last one; the worker's result ends the call", async () => {
    const mine = await client.beta.sessions.create({ agent: agentId, environment_id: envA, initial_events: [{ type: 'user.message', content: [{ type: 'text', text: 'go' }] }] } as never);
    const other = await client.beta.sessions.create({ agent: agentId, environment_id: envA } as never);
    const env = asWorker(keyA).beta.environments.work;
    const item = await until('the session to queue work', async () => (await env.poll(envA, { block_ms: 999 })) ?? undefined);
    expect(item.data).toEqual({ type: 'session', id: mine.id });
    const token = tokenOf(item.secret!);
    const w = asWorker(token);
    // Scoped: its session, not another; its item, not polling or acking.
    expect((await w.beta.sessions.retrieve(mine.id)).id).toBe(mine.id);
    await expect(w.beta.sessions.retrieve(other.id)).rejects.toBeInstanceOf(Anthropic.PermissionDeniedError);
    await expect(w.beta.sessions.events.list(other.id)).rejects.toBeInstanceOf(Anthropic.PermissionDeniedError);
    await expect(w.beta.sessions.events.send(mine.id, { events: [{ type: 'user.message', content: [{ type: 'text', text: 'hi' }] }] })).rejects.toBeInstanceOf(Anthropic.PermissionDeniedError);
    await expect(w.beta.environments.work.poll(envA)).rejects.toBeInstanceOf(Anthropic.PermissionDeniedError);
    await expect(w.beta.environments.work.ack(item.id, { environment_id: envA })).rejects.toBeInstanceOf(Anthropic.PermissionDeniedError);
    await expect(w.beta.sessions.create({ agent: agentId, environment_id: envA } as never)).rejects.toBeInstanceOf(Anthropic.PermissionDeniedError);

    await env.ack(item.id, { environment_id: envA });
    await expect(env.ack(item.id, { environment_id: envA })).rejects.toBeInstanceOf(Anthropic.ConflictError);
    const beat = await w.beta.environments.work.heartbeat(item.id, { environment_id: envA, expected_last_heartbeat: 'NO_HEARTBEAT' });
    expect(beat).toMatchObject({ type: 'work_heartbeat', lease_extended: true, state: 'active', ttl_seconds: 30 });
    const stale = await w.beta.environments.work.heartbeat(item.id, { environment_id: envA, expected_last_heartbeat: 'NO_HEARTBEAT' }).catch((e: unknown) => e);
    expect(stale).toBeInstanceOf(Anthropic.PreconditionFailedError);
    expect((stale as { errorCode: string }).errorCode).toBe('heartbeat_precondition_failed');
    expect((stale as { details: { current_state: { last_heartbeat: string } } }).details.current_state.last_heartbeat).toBe(beat.last_heartbeat);
    const again = await w.beta.environments.work.heartbeat(item.id, { environment_id: envA, expected_last_heartbeat: beat.last_heartbeat, desired_ttl_seconds: 20 });
    expect(again).toMatchObject({ lease_extended: true, ttl_seconds: 20 });
    expect(again.last_heartbeat).not.toBe(beat.last_heartbeat);

    // The worker answers the call as the SDK's runner does; a second answer is refused.
    const log = await allEvents(client, mine.id);
    const use = log.find((e) => e.type === 'agent.tool_use')!;
    const result = { type: 'user.tool_result' as const, tool_use_id: use.id, is_error: false, content: [{ type: 'text' as const, text: 'hi from afar' }] };
    await w.beta.sessions.events.send(mine.id, { events: [result] });
    await expect(w.beta.sessions.events.send(mine.id, { events: [result] })).rejects.toBeInstanceOf(Anthropic.BadRequestError);
    const done = await endedTurn(client, mine.id);
    const answers = done.filter((e) => e.tool_use_id === use.id);
    expect(answers.map((a) => a.type)).toEqual(['user.tool_result']);

    // Stopped by the owner: the next heartbeat says so (the worker then shuts down).
    await client.beta.environments.work.stop(item.id, { environment_id: envA });
    expect(await w.beta.environments.work.heartbeat(item.id, { environment_id: envA, expected_last_heartbeat: again.last_heartbeat })).toMatchObject({ lease_extended: false, state: 'stopping' });
    const retrieved = await client.beta.environments.work.retrieve(item.id, { environment_id: envA });
    expect(retrieved).toMatchObject({ state: 'stopping', secret: null, stop_reason: 'stopped_by_api' });
    await expect(w.beta.environments.work.retrieve(item.id, { environment_id: envA })).rejects.toBeInstanceOf(Anthropic.PermissionDeniedError);
    const updated = await client.beta.environments.work.update(item.id, { environment_id: envA, metadata: { owner: 'me' } });
    expect(updated.metadata).toEqual({ owner: 'me' });
  }, 60_000);

  it("a worker's tool result is redacted like a hand's: its own environment key (a vault value) never reaches the log", async () => {
    const env = (await client.beta.environments.create({ name: 'leaky', config: { type: 'self_hosted' } as never })).id;
    const leakyKey = (await makeKey(url, env)).key;
    const s = await client.beta.sessions.create({ agent: agentId, environment_id: env, initial_events: [{ type: 'user.message', content: [{ type: 'text', text: 'go' }] }] } as never);
    const work = asWorker(leakyKey).beta.environments.work;
    const item = await until('the session to queue work', async () => (await work.poll(env, { block_ms: 999 })) ?? undefined);
    await work.ack(item.id, { environment_id: env });
    const w = asWorker(tokenOf(item.secret!));
    const use = await until('the call', async () => (await allEvents(client, s.id)).find((e) => e.type === 'agent.tool_use'));
    // What `cat /proc/$PPID/environ` on the worker would print.
    await w.beta.sessions.events.send(s.id, { events: [{ type: 'user.tool_result', tool_use_id: use.id, content: [{ type: 'text', text: `CORRAL_ENVIRONMENT_KEY=${leakyKey}` }] }] });
    const done = await endedTurn(client, s.id);
    const result = done.find((e) => e.type === 'user.tool_result')!;
    expect(textOf(result)).toMatch(/^CORRAL_ENVIRONMENT_KEY=\[redacted: credential [^\]]+\]$/);
    expect(JSON.stringify(done)).not.toContain(leakyKey);
  }, 60_000);

  it('user.tool_result is refused for sessions whose environment is not self_hosted', async () => {
    const local = await client.beta.environments.create({ name: 'l2', config: { type: 'local' } as never });
    const s = await client.beta.sessions.create({ agent: agentId, environment_id: local.id } as never);
    const err = await client.beta.sessions.events.send(s.id, { events: [{ type: 'user.tool_result', tool_use_id: 'sevt_x', content: [] }] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Anthropic.BadRequestError);
    expect((err as Error).message).toMatch(/only accepted for sessions whose environment is self_hosted/);
    expect(await allEvents(client, s.id)).toEqual([]);
  });
});
