import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server';

// `GET /v1/sessions/{id}/forks` takes `limit`, `page` and `order` as `GET /v1/sessions` does; it
// used to ignore them and return every fork with `next_page: null`.

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(() => t.close());

describe('the forks of a session, a page at a time', () => {
  it('pages oldest first by limit, both ways, with archived forks and without deleted ones', async () => {
    const agent = (await t.call('POST', '/v1/agents', { name: 'f', model: 'claude-test' })).json;
    const env = (await t.call('POST', '/v1/environments', { name: 'f', config: { type: 'local' } })).json;
    const parent = (await t.call('POST', '/v1/sessions', { agent: agent.id, environment_id: env.id, initial_events: [{ type: 'user.message', content: [{ type: 'text', text: 'hi' }] }] })).json;
    const other = (await t.call('POST', '/v1/sessions', { agent: agent.id, environment_id: env.id, initial_events: [{ type: 'user.message', content: [{ type: 'text', text: 'hi' }] }] })).json;
    const forks: string[] = [];
    for (let i = 0; i < 6; i++) {
      const f = await t.call('POST', `/v1/sessions/${parent.id}/fork`, { at_seq: 1 });
      expect(f.status).toBe(200);
      forks.push(f.json.id);
    }
    // A fork of another session is not listed; an archived fork is, a deleted one is not.
    expect((await t.call('POST', `/v1/sessions/${other.id}/fork`, { at_seq: 1 })).status).toBe(200);
    expect((await t.call('POST', `/v1/sessions/${forks[1]}/archive`, {})).status).toBe(200);
    expect((await t.call('DELETE', `/v1/sessions/${forks[5]}`)).status).toBe(200);
    const listed = forks.slice(0, 5);

    const pages: string[][] = [];
    let page: string | null = null;
    let first: { next_page: string | null; prev_page: string | null } | undefined;
    do {
      const res = await t.call('GET', `/v1/sessions/${parent.id}/forks?limit=2${page ? `&page=${page}` : ''}`);
      expect(res.status).toBe(200);
      first ??= res.json;
      pages.push(res.json.data.map((s: { id: string }) => s.id));
      for (const s of res.json.data) expect(s.forked_from).toEqual({ session_id: parent.id, seq: 1 });
      page = res.json.next_page;
    } while (page);
    expect(pages).toEqual([listed.slice(0, 2), listed.slice(2, 4), listed.slice(4)]);
    expect(first!.prev_page).toBeNull();

    // Newest first, and back again from the second page.
    const desc = await t.call('GET', `/v1/sessions/${parent.id}/forks?order=desc&limit=3`);
    expect(desc.json.data.map((s: { id: string }) => s.id)).toEqual([...listed].reverse().slice(0, 3));
    const second = await t.call('GET', `/v1/sessions/${parent.id}/forks?limit=2&page=${first!.next_page}`);
    const back = await t.call('GET', `/v1/sessions/${parent.id}/forks?limit=2&page=${second.json.prev_page}`);
    expect(back.json.data.map((s: { id: string }) => s.id)).toEqual(listed.slice(0, 2));
    // Without a limit, 20 at most (as the session list).
    expect((await t.call('GET', `/v1/sessions/${parent.id}/forks`)).json.data).toHaveLength(5);
  });

  it('refuses a bad limit, order or page token, and an unknown session, by name', async () => {
    const agent = (await t.call('POST', '/v1/agents', { name: 'g', model: 'claude-test' })).json;
    const env = (await t.call('POST', '/v1/environments', { name: 'g', config: { type: 'local' } })).json;
    const s = (await t.call('POST', '/v1/sessions', { agent: agent.id, environment_id: env.id })).json;
    for (const [query, word] of [
      ['limit=0', 'limit'],
      ['limit=1001', 'limit'],
      ['order=sideways', 'order'],
      ['page=sesn_nothing', 'page token'],
    ] as const) {
      const res = await t.call('GET', `/v1/sessions/${s.id}/forks?${query}`);
      expect(res.status, query).toBe(400);
      expect(res.json.error.message, query).toContain(word);
    }
    const unknown = await t.call('GET', '/v1/sessions/sesn_nothing/forks');
    expect(unknown.status).toBe(404);
  });
});
