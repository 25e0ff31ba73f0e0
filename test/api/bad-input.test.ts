import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server';

let t: TestServer;
let sessionId: string;
beforeAll(async () => {
  t = await startTestServer({ heartbeatMs: 100 });
  const agent = await t.client.beta.agents.create({ name: 'a', model: 'm' });
  const env = await t.client.beta.environments.create({ name: 'e' });
  sessionId = (await t.client.beta.sessions.create({ agent: agent.id, environment_id: env.id })).id;
});
afterAll(() => t.close());

function api(path: string, init: RequestInit = {}) {
  return fetch(`${t.server.url}${path}`, { ...init, headers: { 'x-api-key': t.apiKey, 'content-type': 'application/json', ...init.headers } });
}
const eventCount = () => t.host.log.getSession(sessionId).last_seq;

describe('bad input', () => {
  it('answers malformed JSON and wrong event shapes with 400 and writes nothing', async () => {
    const before = eventCount();
    const cases: [string, string][] = [
      ['{"events": [', 'not valid JSON'],
      ['[]', 'body'],
      ['{"events": []}', 'events'],
      ['{"events": [{"type": "agent.message", "content": []}]}', 'events.0.type'],
      ['{"events": [{"type": "user.message"}]}', 'events.0.content'],
      ['{"events": [{"type": "user.message", "content": [{"type": "text", "text": 5}]}]}', 'events.0.content.0.text'],
      ['{"events": [{"type": "user.message", "content": [{"type": "text", "text": "ok"}]}, {"type": "bogus"}]}', 'events.1'],
    ];
    for (const [body, mentions] of cases) {
      const res = await api(`/v1/sessions/${sessionId}/events`, { method: 'POST', body });
      expect(res.status, body).toBe(400);
      const json = (await res.json()) as { type: string; error: { type: string; message: string } };
      expect(json.type).toBe('error');
      expect(json.error.type).toBe('invalid_request_error');
      expect(json.error.message, body).toContain(mentions);
    }
    expect(eventCount()).toBe(before);
  });

  it('refuses a 50 MB body with 413 and keeps the log whole', async () => {
    const before = eventCount();
    const big = JSON.stringify({ events: [{ type: 'user.message', content: [{ type: 'text', text: 'x'.repeat(50 * 1024 * 1024) }] }] });
    const res = await api(`/v1/sessions/${sessionId}/events`, { method: 'POST', body: big });
    expect(res.status).toBe(413);
    expect(((await res.json()) as { error: { type: string } }).error.type).toBe('request_too_large');
    expect(eventCount()).toBe(before);
    // The server is still fine.
    expect((await api(`/v1/sessions/${sessionId}`)).status).toBe(200);
  });

  it('refuses an event over the 4 MiB cap with 400 naming the field, and writes nothing', async () => {
    const before = eventCount();
    const body = JSON.stringify({ events: [{ type: 'user.message', content: [{ type: 'text', text: 'ok' }, { type: 'text', text: 'x'.repeat(5 * 1024 * 1024) }] }] });
    const res = await api(`/v1/sessions/${sessionId}/events`, { method: 'POST', body });
    expect(res.status).toBe(400);
    const text = await res.text();
    expect(text.length).toBeLessThan(1000); // the field is named, not echoed
    const json = JSON.parse(text) as { error: { type: string; message: string } };
    expect(json.error.type).toBe('invalid_request_error');
    expect(json.error.message).toContain('events[0].content[1].text');
    expect(json.error.message).toContain('4 MiB');
    expect(eventCount()).toBe(before);
  });

  it('keeps concurrent sends to one session gapless and whole', async () => {
    const before = eventCount();
    const n = 60;
    const results = await Promise.all(
      Array.from({ length: n }, (_, i) =>
        api(`/v1/sessions/${sessionId}/events`, {
          method: 'POST',
          body: JSON.stringify({ events: [0, 1].map((j) => ({ type: 'user.message', content: [{ type: 'text', text: `${i}.${j}` }] })) }),
        }).then((r) => r.json() as Promise<{ data: { seq: number; content: { text: string }[] }[] }>),
      ),
    );
    for (const r of results) expect(r.data[1]!.seq).toBe(r.data[0]!.seq + 1); // a batch stays together
    const events = t.host.log.getEvents(sessionId, { after: before, limit: 1000 });
    expect(events.map((e) => e.seq)).toEqual(Array.from({ length: 2 * n }, (_, i) => before + i + 1));
    expect(new Set(events.map((e) => (e.content as { text: string }[])[0]!.text)).size).toBe(2 * n);
  });

  it('makes a repeated Idempotency-Key a no-op', async () => {
    const body = JSON.stringify({ events: [{ type: 'user.message', content: [{ type: 'text', text: 'once' }] }] });
    const a = await (await api(`/v1/sessions/${sessionId}/events`, { method: 'POST', body, headers: { 'idempotency-key': 'k-1' } })).json();
    const before = eventCount();
    const b = await (await api(`/v1/sessions/${sessionId}/events`, { method: 'POST', body, headers: { 'idempotency-key': 'k-1' } })).json();
    expect(b).toEqual(a);
    expect(eventCount()).toBe(before);
  });

  it('answers unknown ids, unbuilt endpoints and bad parameters clearly', async () => {
    const notFound = await api('/v1/sessions/sesn_x/events');
    expect(notFound.status).toBe(404);
    expect(((await notFound.json()) as { error: { message: string } }).error.message).toContain('sesn_x');
    const unbuilt = await api('/v1/files');
    expect(unbuilt.status).toBe(404);
    expect(((await unbuilt.json()) as { error: { message: string } }).error.message).toMatch(/not available in Corral/);
    expect((await api(`/v1/sessions/${sessionId}/events?limit=0`)).status).toBe(400);
    expect((await api(`/v1/sessions?statuses[]=bogus`)).status).toBe(400);
    expect((await api(`/v1/sessions/${sessionId}/fork`, { method: 'POST', body: '{"at_seq": 99999}' })).status).toBe(400);
    expect((await fetch(`${t.server.url}/v1/agents`)).status).toBe(401);
    // fetch() cannot set Host; a DNS-rebinding page would arrive with its own name.
    const status = await new Promise<number>((resolve, reject) => {
      http
        .get({ host: '127.0.0.1', port: t.server.port, path: '/v1/agents', headers: { host: `evil.example:${t.server.port}`, 'x-api-key': t.apiKey } }, (res) => {
          res.resume();
          resolve(res.statusCode!);
        })
        .on('error', reject);
    });
    expect(status).toBe(403);
  });

  it('sends heartbeats on an idle stream', async () => {
    const res = await api(`/v1/sessions/${sessionId}/events/stream`);
    expect(res.headers.get('content-type')).toMatch(/text\/event-stream/);
    const reader = res.body!.getReader();
    let text = '';
    while (!text.includes('event: ping')) text += new TextDecoder().decode((await reader.read()).value);
    await reader.cancel();
    expect(text).toContain('data: {"type":"ping"}');
  });

  it('offers the hosts of ~/.ssh/config', async () => {
    const res = await api('/v1/hands/ssh_config_hosts');
    expect(res.status).toBe(200);
    expect(Array.isArray(((await res.json()) as { data: unknown[] }).data)).toBe(true);
  });

  it('forks a session through the API', async () => {
    const res = await api(`/v1/sessions/${sessionId}/fork`, { method: 'POST', body: '{"at_seq": 2, "title": "branch"}' });
    expect(res.status).toBe(200);
    const fork = (await res.json()) as { id: string; title: string; forked_from: unknown; last_event_seq: number };
    expect(fork).toMatchObject({ title: 'branch', forked_from: { session_id: sessionId, seq: 2 }, last_event_seq: 2 });
    const events = (await (await api(`/v1/sessions/${fork.id}/events`)).json()) as { data: { seq: number }[] };
    expect(events.data.map((e) => e.seq)).toEqual([1, 2]);
  });
});
