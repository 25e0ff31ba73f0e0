import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server';

// POST /v1/sessions/{id} records what changed as a session.updated event. A script that sends the
// same update again (a sync loop, a retry) changes nothing: no event, no new updated_at.

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(() => t.close());

describe('a session update that changes nothing', () => {
  it('logs no session.updated and keeps updated_at; a real change is logged with only what changed', async () => {
    const agent = (await t.call('POST', '/v1/agents', { name: 'u', model: 'claude-test' })).json;
    const env = (await t.call('POST', '/v1/environments', { name: 'u', config: { type: 'local' } })).json;
    const session = (await t.call('POST', '/v1/sessions', { agent: agent.id, environment_id: env.id, title: 'first', metadata: { a: '1' } })).json;
    const path = `/v1/sessions/${session.id}`;
    const updates = async () => ((await t.call('GET', `${path}/events?limit=100`)).json.data as { type: string }[]).filter((e) => e.type === 'session.updated');

    const same = await t.call('POST', path, { title: 'first', metadata: { a: '1' } });
    expect(same.status).toBe(200);
    expect(same.json.updated_at).toBe(session.updated_at);
    expect(await updates()).toHaveLength(0);

    await new Promise((r) => setTimeout(r, 5));
    const changed = await t.call('POST', path, { title: 'first', metadata: { a: '1', b: '2' } });
    expect(changed.json.metadata).toEqual({ a: '1', b: '2' });
    expect(changed.json.updated_at > session.updated_at).toBe(true);
    const logged = await updates();
    expect(logged).toHaveLength(1);
    // The title was sent but did not change: only the metadata is in the event.
    expect(logged[0]).toMatchObject({ metadata: { a: '1', b: '2' } });
    expect(logged[0]).not.toHaveProperty('title');

    // Removing a key that is not there is no change either.
    expect((await t.call('POST', path, { metadata: { c: null } })).status).toBe(200);
    expect(await updates()).toHaveLength(1);
  });
});
