import path from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server';

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer({ heartbeatMs: 200 });
});
afterAll(() => t.close());

const text = (s: string) => ({ type: 'user.message' as const, content: [{ type: 'text' as const, text: s }] });

async function makeAgentAndEnv() {
  const agent = await t.client.beta.agents.create({ name: 'coder', model: 'claude-sonnet-4-5', system: 'be brief' });
  const env = await t.client.beta.environments.create({ name: 'here', config: { type: 'local' } as never });
  return { agent, env };
}

describe('client.beta.agents', () => {
  it('creates, retrieves, updates to a new version, lists with pages, archives', async () => {
    const created = await t.client.beta.agents.create({
      name: 'a1',
      model: { id: 'claude-opus-4-5', effort: 'high' },
      tools: [{ type: 'agent_toolset_20260401', configs: [{ name: 'bash', enabled: false }] }],
      metadata: { team: 'x' },
    });
    expect(created.id).toMatch(/^agent_/);
    expect(created.version).toBe(1);
    expect(created.model).toEqual({ id: 'claude-opus-4-5', effort: { type: 'high' } });
    const toolset = created.tools[0] as Anthropic.Beta.Agents.BetaManagedAgentsAgentToolset20260401;
    expect(toolset.default_config).toEqual({ enabled: true, permission_policy: { type: 'always_allow' } });
    expect(toolset.configs[0]).toMatchObject({ name: 'bash', enabled: false, type: 'bash' });

    const updated = await t.client.beta.agents.update(created.id, { system: 'new', metadata: { team: null, role: 'dev' }, version: 1 });
    expect(updated.version).toBe(2);
    expect(updated.system).toBe('new');
    expect(updated.metadata).toEqual({ role: 'dev' });
    expect((await t.client.beta.agents.retrieve(created.id, { version: 1 })).system).toBeNull();
    // A stale version is a conflict, not a silent overwrite.
    await expect(t.client.beta.agents.update(created.id, { system: 'x', version: 1 })).rejects.toBeInstanceOf(Anthropic.ConflictError);
    // No change, no new version.
    expect((await t.client.beta.agents.update(created.id, { system: 'new' })).version).toBe(2);

    for (let i = 0; i < 4; i++) await t.client.beta.agents.create({ name: `page-${i}`, model: 'm' });
    const names: string[] = [];
    for await (const a of t.client.beta.agents.list({ limit: 2 })) names.push(a.name);
    expect(names.slice(0, 4)).toEqual(['page-3', 'page-2', 'page-1', 'page-0']);
    expect(names).toContain('a1');
    expect(new Set(names).size).toBe(names.length);

    const archived = await t.client.beta.agents.archive(created.id);
    expect(archived.archived_at).not.toBeNull();
    const visible: string[] = [];
    for await (const a of t.client.beta.agents.list()) visible.push(a.id);
    expect(visible).not.toContain(created.id);
    const all: string[] = [];
    for await (const a of t.client.beta.agents.list({ include_archived: true })) all.push(a.id);
    expect(all).toContain(created.id);
  });

  it('rejects a bad body with a 400 that names the field', async () => {
    const err = await t.client.beta.agents.create({ name: '', model: 'm' }).catch((e) => e);
    expect(err).toBeInstanceOf(Anthropic.BadRequestError);
    expect(err.status).toBe(400);
    expect(err.error.error.type).toBe('invalid_request_error');
    expect(err.error.error.message).toMatch(/name/);
  });
});

describe('client.beta.environments', () => {
  it('stores Corral kinds, refuses a type change, archives and deletes', async () => {
    const docker = await t.client.beta.environments.create({
      name: 'box',
      config: { type: 'docker', image: 'busybox:latest', memory_mb: 256 } as never,
    });
    expect(docker.config).toEqual({ type: 'docker', image: 'busybox:latest', memory_mb: 256 });
    const ssh = await t.client.beta.environments.create({ name: 'pi', config: { type: 'ssh', host: '127.0.0.2', port: 2222, user: 'corral' } as never });
    expect((await t.client.beta.environments.retrieve(ssh.id)).config).toMatchObject({ type: 'ssh', host: '127.0.0.2' });
    // No cloud here: refused at the door (test/api/environment-rules.test.ts).
    await expect(t.client.beta.environments.create({ name: 'c', config: { type: 'cloud' } })).rejects.toBeInstanceOf(Anthropic.BadRequestError);
    const cloud = await t.client.beta.environments.create({ name: 'c', config: { type: 'self_hosted' } });

    const err = await t.client.beta.environments.update(docker.id, { config: { type: 'local' } as never }).catch((e) => e);
    expect(err).toBeInstanceOf(Anthropic.BadRequestError);
    expect(err.errorCode).toBe('invalid_config_type_change');
    const renamed = await t.client.beta.environments.update(docker.id, { name: 'box2', config: { type: 'docker', image: 'alpine' } as never });
    expect(renamed.name).toBe('box2');
    expect(renamed.config).toEqual({ type: 'docker', image: 'alpine' });

    await t.client.beta.environments.archive(ssh.id);
    const archivedErr = await t.client.beta.environments.update(ssh.id, { name: 'x' }).catch((e) => e);
    expect(archivedErr.errorCode).toBe('environment_archived');
    const listed: string[] = [];
    for await (const e of t.client.beta.environments.list({ limit: 1 })) listed.push(e.id);
    expect(listed).toContain(docker.id);
    expect(listed).not.toContain(ssh.id);

    expect(await t.client.beta.environments.delete(cloud.id)).toEqual({ id: cloud.id, type: 'environment_deleted' });
    await expect(t.client.beta.environments.retrieve(cloud.id)).rejects.toBeInstanceOf(Anthropic.NotFoundError);
    // A secret has no place in a config.
    await expect(
      t.client.beta.environments.create({ name: 'bad', config: { type: 'ssh', host: 'h', password: 'hunter2' } as never }),
    ).rejects.toBeInstanceOf(Anthropic.BadRequestError);
  });
});

describe('client.beta.sessions', () => {
  it('creates with initial events, retrieves, updates, lists, archives and deletes', async () => {
    const { agent, env } = await makeAgentAndEnv();
    const session = await t.client.beta.sessions.create({
      agent: agent.id,
      environment_id: env.id,
      title: 'first',
      initial_events: [text('hello')],
      metadata: { k: 'v' },
    });
    expect(session.id).toMatch(/^sesn_/);
    expect(session.status).toBe('idle');
    expect(session.agent).toMatchObject({ id: agent.id, version: 1, name: 'coder', system: 'be brief', type: 'agent' });
    const events = await t.client.beta.sessions.events.list(session.id);
    expect(events.data.map((e) => e.type)).toEqual(['user.message']);

    const updated = await t.client.beta.sessions.update(session.id, { title: 'renamed', metadata: { k: null, n: '1' } });
    expect(updated.title).toBe('renamed');
    expect(updated.metadata).toEqual({ n: '1' });
    const types = (await t.client.beta.sessions.events.list(session.id)).data.map((e) => e.type);
    expect(types).toEqual(['user.message', 'session.updated']);

    const more = [];
    for (let i = 0; i < 3; i++) more.push((await t.client.beta.sessions.create({ agent: { type: 'agent', id: agent.id }, environment_id: env.id })).id);
    const listed: string[] = [];
    for await (const s of t.client.beta.sessions.list({ limit: 2 })) listed.push(s.id);
    expect(listed.slice(0, 4)).toEqual([...more].reverse().concat(session.id));
    const asc: string[] = [];
    for await (const s of t.client.beta.sessions.list({ limit: 2, order: 'asc', agent_id: agent.id })) asc.push(s.id);
    expect(asc).toEqual([session.id, ...more]);

    const archived = await t.client.beta.sessions.archive(more[0]!);
    expect(archived.archived_at).not.toBeNull();
    await expect(t.client.beta.sessions.events.send(more[0]!, { events: [text('x')] })).rejects.toBeInstanceOf(Anthropic.BadRequestError);

    expect(await t.client.beta.sessions.delete(more[1]!)).toEqual({ id: more[1], type: 'session_deleted' });
    await expect(t.client.beta.sessions.retrieve(more[1]!)).rejects.toBeInstanceOf(Anthropic.NotFoundError);
  });

  it('refuses unknown agents and environments with 404 and never stores a token', async () => {
    const { agent, env } = await makeAgentAndEnv();
    await expect(t.client.beta.sessions.create({ agent: 'agent_nope', environment_id: env.id })).rejects.toBeInstanceOf(Anthropic.NotFoundError);
    await expect(t.client.beta.sessions.create({ agent: agent.id, environment_id: 'env_nope' })).rejects.toBeInstanceOf(Anthropic.NotFoundError);
    const err = await t.client.beta.sessions
      .create({ agent: agent.id, environment_id: env.id, resources: [{ type: 'github_repository', url: 'https://example.com/r.git', authorization_token: 'ghp_secret' }] })
      .catch((e) => e);
    expect(err).toBeInstanceOf(Anthropic.BadRequestError);
    const rows = sqlite(t).prepare("SELECT count(*) AS n FROM sessions WHERE record LIKE '%ghp_secret%'").get() as { n: number };
    expect(rows.n).toBe(0);
    const before = (sqlite(t).prepare('SELECT count(*) AS n FROM sessions').get() as { n: number }).n;
    const fileErr = await t.client.beta.sessions
      .create({ agent: agent.id, environment_id: env.id, resources: [{ type: 'github_repository', url: 'https://example.com/r.git' }, { type: 'file', file_id: 'file_x' }] })
      .catch((e) => e);
    expect(fileErr).toBeInstanceOf(Anthropic.BadRequestError);
    expect(String(fileErr.message)).toMatch(/resources\[1\]: 'file' resources are not supported yet/);
    expect((sqlite(t).prepare('SELECT count(*) AS n FROM sessions').get() as { n: number }).n).toBe(before);
  });
});

/** A second, read-only connection to the host's database file: what is stored, as SQL sees it. */
function sqlite(t: TestServer) {
  const db = new Database(path.join(t.host.dataDir, 'corral.sqlite'), { readonly: true });
  onTestFinished(() => {
    db.close();
  });
  return db;
}

describe('client.beta.sessions.events', () => {
  it('sends, lists with cursor pages, order and type filters', async () => {
    const { agent, env } = await makeAgentAndEnv();
    const s = await t.client.beta.sessions.create({ agent: agent.id, environment_id: env.id });
    const sent = await t.client.beta.sessions.events.send(s.id, { events: [text('1'), text('2'), { type: 'user.interrupt' }, text('3'), text('4')] });
    expect(sent.data!.map((e) => e.type)).toEqual(['user.message', 'user.message', 'user.interrupt', 'user.message', 'user.message']);
    const seen: string[] = [];
    for await (const e of t.client.beta.sessions.events.list(s.id, { limit: 2 })) seen.push(e.id);
    expect(seen).toEqual(sent.data!.map((e) => e.id));
    const first = await t.client.beta.sessions.events.list(s.id, { limit: 2, order: 'desc' });
    expect(first.data.map((e) => e.id)).toEqual([sent.data![4]!.id, sent.data![3]!.id]);
    expect(first.hasNextPage()).toBe(true);
    const second = await first.getNextPage();
    expect(second.data.map((e) => e.id)).toEqual([sent.data![2]!.id, sent.data![1]!.id]);
    const interrupts = await t.client.beta.sessions.events.list(s.id, { types: ['user.interrupt'] });
    expect(interrupts.data.map((e) => e.id)).toEqual([sent.data![2]!.id]);
    await expect(t.client.beta.sessions.events.list(s.id, { page: 'garbage!' })).rejects.toBeInstanceOf(Anthropic.BadRequestError);
  });

  it('streams new events as SSE and resumes after the last event seen', async () => {
    const { agent, env } = await makeAgentAndEnv();
    const s = await t.client.beta.sessions.create({ agent: agent.id, environment_id: env.id, initial_events: [text('before')] });
    const stream = await t.client.beta.sessions.events.stream(s.id);
    const got: string[] = [];
    const reading = (async () => {
      for await (const e of stream) {
        if (e.type === 'user.message') got.push((e.content[0] as { text: string }).text);
        if (got.length === 2) break;
      }
    })();
    await new Promise((r) => setTimeout(r, 100));
    const a = await t.client.beta.sessions.events.send(s.id, { events: [text('live-1')] });
    await t.client.beta.sessions.events.send(s.id, { events: [text('live-2')] });
    await reading;
    // Only what came after the stream opened, in order.
    expect(got).toEqual(['live-1', 'live-2']);

    // Resume: everything after live-1, then new events.
    const resumed = await t.client.beta.sessions.events.stream(s.id, {}, { headers: { 'Last-Event-ID': a.data![0]!.id } });
    const after: string[] = [];
    const reading2 = (async () => {
      for await (const e of resumed) {
        if (e.type === 'user.message') after.push((e.content[0] as { text: string }).text);
        if (after.length === 2) break;
      }
    })();
    await t.client.beta.sessions.events.send(s.id, { events: [text('live-3')] });
    await reading2;
    expect(after).toEqual(['live-2', 'live-3']);
  });

  it('answers 404 for an unknown session and 401 for a wrong key', async () => {
    const err = await t.client.beta.sessions.retrieve('sesn_01NOPE').catch((e) => e);
    expect(err).toBeInstanceOf(Anthropic.NotFoundError);
    expect(err.error).toMatchObject({ type: 'error', error: { type: 'not_found_error' } });
    await expect(t.client.beta.sessions.events.list('sesn_01NOPE')).rejects.toBeInstanceOf(Anthropic.NotFoundError);
    const wrong = new Anthropic({ apiKey: 'wrong', baseURL: t.server.url, maxRetries: 0 });
    const authErr = await wrong.beta.agents.list().catch((e) => e);
    expect(authErr).toBeInstanceOf(Anthropic.AuthenticationError);
    expect(authErr.error.error.type).toBe('authentication_error');
  });
});
