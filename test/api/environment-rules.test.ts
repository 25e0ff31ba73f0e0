import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoTarget } from '../../main/hands/resources';
import { startTestServer, type TestServer } from '../helpers/server';

/**
 * Fields the API accepts that Corral cannot honour as the API means them are refused at the
 * door with a 400 naming them, and nothing is stored: a `cloud` environment (no cloud here) and
 * a repository `mount_path` outside /workspace/ (it was used as given, anywhere on the hand).
 */

let t: TestServer;
let agentId: string;
let envId: string;
beforeAll(async () => {
  t = await startTestServer();
  agentId = (await t.client.beta.agents.create({ name: 'a', model: 'claude-test' })).id;
  envId = (await t.client.beta.environments.create({ name: 'here', config: { type: 'local' } as never })).id;
});
afterAll(() => t.close());

async function refusal(p: Promise<unknown>): Promise<string> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(Anthropic.BadRequestError);
  return (err as { error: { error: { message: string } } }).error.error.message;
}

describe('a cloud environment', () => {
  it('is refused at creation with a 400 naming the config type, and nothing is stored', async () => {
    const before = t.host.environments.list({ limit: 1000 }).data.length;
    const message = await refusal(t.client.beta.environments.create({ name: 'c', config: { type: 'cloud' } }));
    expect(message).toMatch(/^config: config type 'cloud' is not supported by Corral yet \(no cloud containers here/);
    const withNetworking = await refusal(t.client.beta.environments.create({ name: 'c', config: { type: 'cloud', networking: { type: 'limited', allowed_hosts: ['example.com'] } } }));
    expect(withNetworking).toContain("config type 'cloud'");
    expect(t.host.environments.list({ limit: 1000 }).data.length).toBe(before);
  });

  it('cannot be reached by an update either', async () => {
    const message = await refusal(t.client.beta.environments.update(envId, { config: { type: 'cloud' } }));
    expect(message).toContain("config type 'cloud'");
  });
});

describe('a repository mount_path', () => {
  const repo = (mount_path: string) => ({ type: 'github_repository' as const, url: 'https://example.com/r.git', mount_path });

  it('outside /workspace/ is refused with a 400 naming mount_path, at creation and when added', async () => {
    const session = await t.client.beta.sessions.create({ agent: agentId, environment_id: envId });
    for (const bad of ['/etc/cron.d/x', '/home/u/r', 'relative/r', '/workspace/', '/workspace', '/workspace/../etc', '/workspace/a/./b', '/workspace//a', '/workspaces/a']) {
      const atCreation = await refusal(t.client.beta.sessions.create({ agent: agentId, environment_id: envId, resources: [repo(bad)] }));
      expect(atCreation, bad).toMatch(/^resources\.0\.mount_path: mount_path must/);
      const added = await refusal(t.client.beta.sessions.resources.add(session.id, repo(bad) as never));
      expect(added, bad).toMatch(/mount_path: mount_path must/);
    }
    expect((await t.client.beta.sessions.resources.list(session.id)).data).toEqual([]);
  });

  it('under /workspace/ is accepted and lands in the work folder', async () => {
    const s = await t.client.beta.sessions.create({ agent: agentId, environment_id: envId, resources: [repo('/workspace/src/r')] });
    expect(s.resources[0]).toMatchObject({ mount_path: '/workspace/src/r' });
    expect(repoTarget('/workspace/src/r', 'https://example.com/r.git')).toBe('src/r');
    // The default stays the API's: /workspace/<repo-name>.
    const d = await t.client.beta.sessions.create({ agent: agentId, environment_id: envId, resources: [{ type: 'github_repository', url: 'https://example.com/r.git' }] });
    expect(d.resources[0]).toMatchObject({ mount_path: '/workspace/r' });
  });
});
