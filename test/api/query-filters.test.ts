import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server';

// List filters a client got wrong are refused with a 400 that names them, not read as something
// else: a type that is no event type matched nothing (an empty 200), and `created_at[gt]=1` was
// taken by Date.parse as the year 2001.

let t: TestServer;
let session: string;
beforeAll(async () => {
  t = await startTestServer();
  const agent = (await t.call('POST', '/v1/agents', { name: 'q', model: 'claude-test' })).json;
  const env = (await t.call('POST', '/v1/environments', { name: 'q', config: { type: 'local' } })).json;
  session = (await t.call('POST', '/v1/sessions', { agent: agent.id, environment_id: env.id })).json.id;
});
afterAll(() => t.close());

describe('event and session list filters', () => {
  it('types[] must be event types', async () => {
    const bad = await t.call('GET', `/v1/sessions/${session}/events?types[]=bogus`);
    expect(bad.status).toBe(400);
    expect(bad.json.error.message).toMatch(/types\[\] must be event types .* got 'bogus'/);
    expect((await t.call('GET', `/v1/sessions/${session}/events?types[]=agent.message&types[]=Agent.Message`)).status).toBe(400);
    const good = await t.call('GET', `/v1/sessions/${session}/events?types[]=session.status_idle&types[]=agent.message`);
    expect(good.status).toBe(200);
  });

  it('created_at filters must be RFC 3339 date-times; an offset counts, encoded or not', async () => {
    for (const v of ['1', '2026', '2026-01-01', 'Jan 1 2026', '2026-01-01T00:00Z', '2026-13-01T00:00:00Z']) {
      for (const path of [`/v1/sessions/${session}/events`, '/v1/sessions']) {
        const r = await t.call('GET', `${path}?created_at[gt]=${encodeURIComponent(v)}`);
        expect(r.status, `${path} ${v}`).toBe(400);
        expect(r.json.error.message).toMatch(/created_at\[gt\] must be an RFC 3339 timestamp/);
      }
    }
    const past = '2000-01-01T00:00:00Z';
    const ids = (r: { json: { data: { id: string }[] } }) => r.json.data.map((s) => s.id);
    const all = ids(await t.call('GET', `/v1/sessions?created_at[gt]=${past}`));
    expect(all).toContain(session);
    // The same instant with an offset, encoded, and with its '+' left unencoded (a space).
    const encoded = ids(await t.call('GET', `/v1/sessions?created_at[gt]=${encodeURIComponent('2000-01-01T05:00:00.000+05:00')}`));
    const spaced = ids(await t.call('GET', '/v1/sessions?created_at[gt]=2000-01-01T05:00:00+05:00'));
    expect(encoded).toEqual(all);
    expect(spaced).toEqual(all);
    expect(ids(await t.call('GET', `/v1/sessions?created_at[gt]=${encodeURIComponent('2999-01-01T00:00:00Z')}`))).toEqual([]);
    // Before the fix this read as the year 2001 and listed every session.
    expect((await t.call('GET', '/v1/sessions?created_at[gt]=1')).status).toBe(400);
  });
});
