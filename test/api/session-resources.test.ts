import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type RunningServer } from '../../main/api/http/server';
import type { LoggedEvent } from '../../main/session/types';
import type { RecordedRequest, Reply } from '../fixtures/model-server';
import { startBrainHost, textOf, type BrainTestHost } from '../helpers/brain-host';
import { tmpDir } from '../helpers/tmp';

/**
 * client.beta.sessions.resources: add (a github_repository, Corral's addition; `file` is
 * refused), update (a token: refused, tokens live in the vault) and delete, through the SDK,
 * applied to a real local hand that is already provisioned or at its first provisioning.
 */

let t: BrainTestHost;
let server: RunningServer;
let client: Anthropic;
let repo: string;
let envId: string;
let agentId: string;

const gitEnv = { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@t', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@t' };

/** The model runs the command the last user message names (`run: …`), then says done. */
function script(req: RecordedRequest): Reply {
  const last = req.body.messages.at(-1);
  const text = typeof last.content === 'string' ? last.content : (last.content.find((b: { type: string }) => b.type === 'text')?.text ?? '');
  const run = /^run: (.*)$/s.exec(text);
  if (last.role === 'user' && run) return { blocks: [{ type: 'tool_use', name: 'bash', input: { command: run[1] } }] };
  return { blocks: [{ type: 'text', text: 'done' }] };
}

beforeAll(async () => {
  repo = path.join(tmpDir(), 'proj');
  fs.mkdirSync(repo);
  const git = (...args: string[]) => execFileSync('git', args, { cwd: repo, env: gitEnv, encoding: 'utf8' });
  git('init', '--quiet', '-b', 'main');
  fs.writeFileSync(path.join(repo, 'README'), 'hello from the repository\n');
  git('add', '.');
  git('commit', '--quiet', '-m', 'one');
  t = await startBrainHost(script);
  server = await startServer(t.host, { port: 0, apiKey: 'test-key-123', rendererDir: tmpDir() });
  client = new Anthropic({ apiKey: 'test-key-123', baseURL: server.url, maxRetries: 0 });
  envId = (await client.beta.environments.create({ name: 'here', config: { type: 'local' } as never })).id;
  agentId = (await client.beta.agents.create({ name: 'runner', model: 'claude-test', tools: [{ type: 'agent_toolset_20260401', configs: [{ name: 'web_search', enabled: false }, { name: 'web_fetch', enabled: false }] }] })).id;
}, 60_000);
afterAll(async () => {
  await server?.close();
  await t?.close();
});

const repoResource = (mount: string) => ({ type: 'github_repository', url: `file://${repo}`, mount_path: `/workspace/${mount}` }) as never;

async function say(sessionId: string, text: string): Promise<LoggedEvent[]> {
  const before = t.events(sessionId).length;
  await client.beta.sessions.events.send(sessionId, { events: [{ type: 'user.message', content: [{ type: 'text', text }] }] });
  await waitFor(() => t.events(sessionId).slice(before).some((e) => e.type === 'session.status_idle'));
  return t.settled(sessionId);
}

async function waitFor(ok: () => boolean, ms = 30_000): Promise<void> {
  const end = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > end) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe('session resources through the SDK', () => {
  it('adds a repository to a session whose hand is provisioned: cloned onto it at once', async () => {
    const session = await client.beta.sessions.create({ agent: agentId, environment_id: envId });
    await say(session.id, 'run: true');
    expect(t.events(session.id).filter((e) => e.type === 'hand.ready')).toHaveLength(1);

    const added = (await client.beta.sessions.resources.add(session.id, repoResource('proj'))) as unknown as Record<string, unknown>;
    expect(added).toMatchObject({ type: 'github_repository', url: `file://${repo}`, mount_path: '/workspace/proj' });
    expect(String(added.id)).toMatch(/^sesrsc_/);
    await waitFor(() => t.events(session.id).some((e) => e.type === 'hand.resource_applied' && e.resource_id === added.id));
    const events = await say(session.id, 'run: cat proj/README');
    expect(textOf(events.filter((e) => e.type === 'agent.tool_result').at(-1))).toContain('hello from the repository');
    // The hand was not provisioned again for it.
    expect(events.filter((e) => e.type === 'hand.ready')).toHaveLength(1);

    const listed: string[] = [];
    for await (const r of client.beta.sessions.resources.list(session.id)) listed.push((r as { id: string }).id);
    expect(listed).toEqual([added.id]);
    expect(await client.beta.sessions.resources.retrieve(String(added.id), { session_id: session.id })).toMatchObject({ id: added.id });
    expect(events.some((e) => e.type === 'session.updated' && Array.isArray(e.resources))).toBe(true);

    // A second one at the same mount path would clone onto the first.
    await expect(client.beta.sessions.resources.add(session.id, repoResource('proj'))).rejects.toThrow(/mount_path '\/workspace\/proj' is already used/);
  }, 90_000);

  it('refuses a token update (the vault holds tokens) and file resources, and the log stays as it was', async () => {
    const session = await client.beta.sessions.create({ agent: agentId, environment_id: envId, resources: [repoResource('proj')] });
    const rid = (session.resources[0] as { id: string }).id;
    const before = t.events(session.id).length;
    const upd = await client.beta.sessions.resources.update(rid, { session_id: session.id, authorization_token: 'ghp_0123456789abcdef' }).catch((e) => e);
    expect(upd).toBeInstanceOf(Anthropic.BadRequestError);
    expect(String(upd.message)).toMatch(/authorization_token is not accepted.*git_token/);
    const file = await client.beta.sessions.resources.add(session.id, { type: 'file', file_id: 'file_1' }).catch((e) => e);
    expect(file).toBeInstanceOf(Anthropic.BadRequestError);
    expect(String(file.message)).toMatch(/type 'file' is not supported by Corral yet/);
    const withToken = await client.beta.sessions.resources.add(session.id, { ...(repoResource('other') as object), authorization_token: 'ghp_0123456789abcdef' } as never).catch((e) => e);
    expect(withToken).toBeInstanceOf(Anthropic.BadRequestError);
    await expect(client.beta.sessions.resources.update('sesrsc_nope', { session_id: session.id, authorization_token: 'x' })).rejects.toBeInstanceOf(Anthropic.NotFoundError);
    expect(t.events(session.id)).toHaveLength(before);
    expect(JSON.stringify(t.host.log.getSession(session.id).record)).not.toContain('ghp_0123456789abcdef');
  });

  it('before the first provisioning: added ones are applied then, deleted ones are not', async () => {
    const session = await client.beta.sessions.create({ agent: agentId, environment_id: envId });
    const keep = (await client.beta.sessions.resources.add(session.id, repoResource('keep'))) as unknown as { id: string };
    const drop = (await client.beta.sessions.resources.add(session.id, repoResource('drop'))) as unknown as { id: string };
    expect(await client.beta.sessions.resources.delete(drop.id, { session_id: session.id })).toEqual({ id: drop.id, type: 'session_resource_deleted' });
    await expect(client.beta.sessions.resources.retrieve(drop.id, { session_id: session.id })).rejects.toBeInstanceOf(Anthropic.NotFoundError);
    const events = await say(session.id, 'run: ls');
    const applied = events.filter((e) => e.type === 'hand.resource_applied').map((e) => e.resource_id);
    expect(applied).toEqual([keep.id]);
    expect(textOf(events.filter((e) => e.type === 'agent.tool_result').at(-1))).toMatch(/^keep$/m);
    expect(textOf(events.filter((e) => e.type === 'agent.tool_result').at(-1))).not.toMatch(/drop/);
  }, 90_000);
});
