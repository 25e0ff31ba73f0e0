import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server';

// `GET /v1/sessions/{id}/resources` takes the SDK's `limit` and `page`; it used to ignore both
// and return every resource with `next_page: null`.

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(() => t.close());

describe('session resources list', () => {
  it('pages by limit, and the SDK walks every page', async () => {
    const agent = await t.client.beta.agents.create({ name: 'r', model: 'claude-test' });
    const env = await t.client.beta.environments.create({ name: 'r', config: { type: 'local' } as never });
    const resources = Array.from({ length: 5 }, (_, i) => ({ type: 'github_repository' as const, url: `https://example.com/r${i}.git` }));
    const session = await t.client.beta.sessions.create({ agent: agent.id, environment_id: env.id, resources } as never);
    const ids = (session.resources as { id: string }[]).map((r) => r.id);

    const first = await t.client.beta.sessions.resources.list(session.id, { limit: 2 });
    expect(first.data.map((r) => (r as { id: string }).id)).toEqual(ids.slice(0, 2));
    expect(first.next_page).toBeTruthy();
    const walked: string[] = [];
    for await (const r of t.client.beta.sessions.resources.list(session.id, { limit: 2 })) walked.push((r as { id: string }).id);
    expect(walked).toEqual(ids);
    expect((await t.client.beta.sessions.resources.list(session.id, { limit: 5 })).next_page).toBeNull();

    const res = await fetch(`${t.server.url}/v1/sessions/${session.id}/resources?page=sesrsc_nothing`, { headers: { 'x-api-key': t.apiKey } });
    expect(res.status).toBe(400);
    const bad = await fetch(`${t.server.url}/v1/sessions/${session.id}/resources?limit=0`, { headers: { 'x-api-key': t.apiKey } });
    expect(bad.status).toBe(400);
  });

  it('adding one past 50 (the bound at creation) is refused, naming the bound; nothing is logged', async () => {
    const agent = (await t.call('POST', '/v1/agents', { name: 'cap', model: 'claude-test' })).json;
    const env = (await t.call('POST', '/v1/environments', { name: 'cap', config: { type: 'local' } })).json;
    const resources = Array.from({ length: 50 }, (_, i) => ({ type: 'github_repository', url: `https://example.com/c${i}.git` }));
    const session = (await t.call('POST', '/v1/sessions', { agent: agent.id, environment_id: env.id, resources })).json;
    expect(session.resources).toHaveLength(50);
    const before = t.host.log.getEvents(session.id).length;
    const more = await t.call('POST', `/v1/sessions/${session.id}/resources`, { type: 'github_repository', url: 'https://example.com/c50.git' });
    expect(more.status).toBe(400);
    expect(more.json.error.message).toMatch(/at most 50 resources/);
    expect(t.host.log.getEvents(session.id)).toHaveLength(before);
    expect((await t.call('GET', `/v1/sessions/${session.id}`)).json.resources).toHaveLength(50);
  });
});
