import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoTarget } from '../../main/hands/resources';
import { startTestServer, type TestServer } from '../helpers/server';

// A repository's default mount path comes from its URL's last segment. `https://host/o/...git`
// gave `/workspace/..` (the clone went to the parent of the session's work folder, the work root
// every session shares) and `https://host/o/.git` gave `/workspace/` itself: both refused when
// given as mount_path, both taken as defaults. And two repositories of one name at creation
// were both given `/workspace/<name>` (POST …/resources refuses that clash; create did not).

let t: TestServer;
let agentId: string;
let envId: string;
beforeAll(async () => {
  t = await startTestServer();
  agentId = (await t.client.beta.agents.create({ name: 'm', model: 'claude-test' })).id;
  envId = (await t.client.beta.environments.create({ name: 'm', config: { type: 'local' } as never })).id;
});
afterAll(() => t.close());

async function create(resources: unknown[]): Promise<{ status: number; json: any }> {
  const res = await fetch(`${t.server.url}/v1/sessions`, {
    method: 'POST',
    headers: { 'x-api-key': t.apiKey, 'content-type': 'application/json' },
    body: JSON.stringify({ agent: agentId, environment_id: envId, resources }),
  });
  return { status: res.status, json: await res.json() };
}

const repo = (url: string, mount_path?: string) => ({ type: 'github_repository', url, ...(mount_path ? { mount_path } : {}) });

describe('repository mount paths', () => {
  it('defaults stay inside the work folder', async () => {
    for (const url of ['https://example.com/o/...git', 'https://example.com/o/.git', 'https://example.com/']) {
      const made = await create([repo(url)]);
      expect(made.status, JSON.stringify(made.json)).toBe(200);
      expect(made.json.resources[0].mount_path, url).toBe('/workspace/repo');
    }
    expect((await create([repo('https://example.com/o/tool.git')])).json.resources[0].mount_path).toBe('/workspace/tool');
    // Added later, the same default.
    const session = (await create([])).json;
    const added = await fetch(`${t.server.url}/v1/sessions/${session.id}/resources`, {
      method: 'POST',
      headers: { 'x-api-key': t.apiKey, 'content-type': 'application/json' },
      body: JSON.stringify(repo('https://example.com/o/...git')),
    });
    expect(((await added.json()) as { mount_path: string }).mount_path).toBe('/workspace/repo');
    // Where the hand clones a resource stored without a mount path.
    expect(repoTarget(undefined, 'https://example.com/o/...git')).toBe('repo');
    expect(repoTarget(undefined, 'https://example.com/o/.git')).toBe('repo');
  });

  it('two repositories with one mount path at creation are refused, naming the field', async () => {
    const clash = await create([repo('https://example.com/a/repo'), repo('https://example.org/b/repo.git')]);
    expect(clash.status, JSON.stringify(clash.json)).toBe(400);
    expect(clash.json.error.message).toMatch(/resources\[1\]\.mount_path/);
    const given = await create([repo('https://example.com/a/x', '/workspace/same'), repo('https://example.com/b/y', '/workspace/same')]);
    expect(given.status).toBe(400);
    const apart = await create([repo('https://example.com/a/repo'), repo('https://example.org/b/repo.git', '/workspace/repo-b')]);
    expect(apart.status, JSON.stringify(apart.json)).toBe(200);
  });
});
