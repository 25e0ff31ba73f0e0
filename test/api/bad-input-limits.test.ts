import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import pino from 'pino';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { uiSessionHeaders } from '../helpers/ui-session';
import { startTestServer, type TestServer } from '../helpers/server';
import { tmpDir } from '../helpers/tmp';

// Input that used to answer 500 (or echo megabytes back), and a small fuzz loop over the routes.
// The host's log is kept in memory: bad input must never log an error or a stack.

const records: Record<string, unknown>[] = [];
const logger = pino({ level: 'info', formatters: { level: (label) => ({ level: label }) } }, { write: (l: string) => void records.push(JSON.parse(l)) });

let t: TestServer;
let ids: { agent: string; env: string; session: string };
beforeAll(async () => {
  const rendererDir = tmpDir();
  fs.writeFileSync(path.join(rendererDir, 'index.html'), '<!doctype html>');
  t = await startTestServer({ rendererDir, logger });
  const agent = await t.client.beta.agents.create({ name: 'a', model: 'm' });
  const env = await t.client.beta.environments.create({ name: 'e' });
  ids = { agent: agent.id, env: env.id, session: (await t.client.beta.sessions.create({ agent: agent.id, environment_id: env.id })).id };
});
afterAll(async () => {
  await t.close();
  // Whatever the tests sent, nothing was logged as a server failure.
  expect(records.filter((r) => r.level === 'error' || r.err)).toEqual([]);
});

function api(p: string, init: RequestInit = {}) {
  return fetch(`${t.server.url}${p}`, { ...init, headers: { 'x-api-key': t.apiKey, 'content-type': 'application/json', ...init.headers } });
}
async function errorOf(res: Response): Promise<{ status: number; type: string; message: string; length: number }> {
  const text = await res.text();
  const json = JSON.parse(text) as { error: { type: string; message: string } };
  return { status: res.status, type: json.error.type, message: json.error.message, length: text.length };
}
/** `{"type":"object","properties":{"a":{"a":…1…}}}`, `depth` levels deep (JSON.stringify cannot build it). */
const deepSchema = (depth: number) => `{"type":"object","properties":${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}}`;

describe('bad input answers 4xx, not 500', () => {
  it('refuses 5k-level nesting in an input_schema, a toolset config and a session override', async () => {
    const bodies: [string, string][] = [
      ['/v1/agents', `{"name":"n","model":"m","tools":[{"type":"custom","name":"t","description":"d","input_schema":${deepSchema(5000)}}]}`],
      ['/v1/agents', `{"name":"n","model":"m","tools":[{"type":"agent_toolset_20260401","configs":[{"name":"bash","x":${deepSchema(5000)}}]}]}`],
      [`/v1/agents/${'AGENT'}`, `{"tools":[{"type":"custom","name":"t","description":"d","input_schema":${deepSchema(5000)}}]}`],
      ['/v1/sessions', `{"agent":{"type":"agent_with_overrides","id":"AGENT","tools":[{"type":"custom","name":"t","description":"d","input_schema":${deepSchema(5000)}}]},"environment_id":"ENV"}`],
      ['/v1/agents', `${'['.repeat(100_000)}${']'.repeat(100_000)}`],
    ];
    for (const [route, body] of bodies) {
      const res = await api(route.replace('AGENT', ids.agent), { method: 'POST', body: body.replace('AGENT', ids.agent).replace('ENV', ids.env) });
      const err = await errorOf(res);
      expect(err.status, route).toBe(400);
      expect(err.message).toMatch(/nests .* deeper than 100 levels/);
    }
    // Ordinary depth is fine.
    const ok = await api('/v1/agents', { method: 'POST', body: `{"name":"n","model":"m","tools":[{"type":"custom","name":"t","description":"d","input_schema":${deepSchema(40)}}]}` });
    expect(ok.status).toBe(200);
  });

  it("bounds a stdio MCP server's environment by count, name and size, naming the bound", async () => {
    const agent = (env: Record<string, string>) =>
      api('/v1/agents', {
        method: 'POST',
        body: JSON.stringify({ name: 'e', model: 'm', mcp_servers: [{ type: 'stdio', name: 's', command: ['srv'], env }], tools: [{ type: 'mcp_toolset', mcp_server_name: 's' }] }),
      });
    const vars = (n: number, value = 'v') => Object.fromEntries(Array.from({ length: n }, (_, i) => [`V${i}`, value]));
    expect((await agent(vars(256))).status).toBe(200);
    const many = await errorOf(await agent(vars(257)));
    expect(many.status).toBe(400);
    expect(many.message).toContain('at most 256 environment variables');
    // 20 values of 30,000 characters: each within its own bound, the whole over 256 KiB (exec's limit is 2 MiB in all).
    const large = await errorOf(await agent(vars(20, 'x'.repeat(30_000))));
    expect(large.status).toBe(400);
    expect(large.message).toContain('characters of variables in all');
    expect(large.length).toBeLessThan(2000);
    const longName = await errorOf(await agent({ ['N'.repeat(300)]: 'v' }));
    expect(longName.status).toBe(400);
  });

  it("bounds an environment config's variables by count, name and size too", async () => {
    const environment = (env: Record<string, string>) => api('/v1/environments', { method: 'POST', body: JSON.stringify({ name: 'v', config: { type: 'local', env } }) });
    const vars = (n: number, value = 'v') => Object.fromEntries(Array.from({ length: n }, (_, i) => [`V${i}`, value]));
    expect((await environment(vars(100))).status).toBe(200);
    expect((await errorOf(await environment(vars(101)))).message).toContain('at most 100 variables');
    const large = await errorOf(await environment(vars(10, 'x'.repeat(30_000))));
    expect(large.status).toBe(400);
    expect(large.message).toContain('characters of variables in all');
    expect((await errorOf(await environment({ LD_PRELOAD: '/tmp/x.so' }))).message).toContain('changes how commands are started');
  });

  it('never echoes a 10 MB field back', async () => {
    const big = 'x'.repeat(10 * 1024 * 1024);
    const cases: [string, string][] = [
      ['/v1/agents', JSON.stringify({ name: 'n', model: 'm', [big]: 1 })],
      ['/v1/agents', JSON.stringify({ name: 'n', model: 'm', metadata: { [big]: 'v' } })],
      ['/v1/sessions', JSON.stringify({ agent: big, environment_id: 'e' })],
      ['/v1/sessions', JSON.stringify({ agent: ids.agent, environment_id: big })],
      [`/v1/sessions/${ids.session}/fork`, JSON.stringify({ at_event_id: big })],
      [`/v1/sessions/${ids.session}/hands/main/hand_over`, JSON.stringify({ to_session_id: big })],
      [`/v1/sessions/${ids.session}/events`, JSON.stringify({ events: [{ type: big }] })],
    ];
    for (const [route, body] of cases) {
      const err = await errorOf(await api(route, { method: 'POST', body }));
      expect([400, 404], route).toContain(err.status);
      expect(err.length, route).toBeLessThan(3000);
    }
  });

  it('answers a NUL or an over-long name in a static path with 400 or 404', async () => {
    for (const p of ['/%00', '/a%00.js', '/assets/%00x.js']) expect((await fetch(`${t.server.url}${p}`)).status, p).toBe(400);
    expect((await fetch(`${t.server.url}/${'x'.repeat(5000)}.js`)).status).toBe(404);
    expect((await fetch(`${t.server.url}/${'x'.repeat(5000)}`)).status).toBe(200); // a route of the page
  });

  it('refuses a WebSocket with Origin: null as cross-origin, not with a 500', async () => {
    const reply = await new Promise<string>((resolve, reject) => {
      let text = '';
      const s = net.connect(t.server.port, '127.0.0.1', () =>
        s.write(
          `GET /ui/ws HTTP/1.1\r\nHost: 127.0.0.1:${t.server.port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
            'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\nOrigin: null\r\n\r\n',
        ),
      );
      // Until the close frame is in (the server then waits for ours, which never comes).
      s.on('data', (d) => {
        text += d.toString('latin1');
        if (text.includes('refused')) {
          s.destroy();
          resolve(text);
        }
      });
      s.on('close', () => resolve(text));
      s.on('error', reject);
    });
    expect(reply.split('\r\n')[0]).toBe('HTTP/1.1 101 Switching Protocols');
    // The close frame carries 4403 (0x11 0x33) and says why.
    expect(reply).toContain('\x11\x33cross-origin connection refused');
  });

  it('answers a UI message that is JSON but no object (null, 5, "x") with an error, not a TypeError', async () => {
    const ws = new WebSocket(`${t.server.url.replace('http', 'ws')}/ui/ws`, { headers: await uiSessionHeaders(t.server.url, t.apiKey) });
    await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
    const replies: { id: unknown; error?: { message: string } }[] = [];
    const got = new Promise<void>((resolve) =>
      ws.on('message', (d) => {
        replies.push(JSON.parse(d.toString()));
        if (replies.length === 3) resolve();
      }),
    );
    for (const msg of ['null', '5', '"x"']) ws.send(msg);
    await got;
    ws.close();
    expect(replies.map((r) => r.error?.message)).toEqual(Array(3).fill('message needs a numeric id'));
  });
});

/** A small deterministic PRNG (mulberry32), so a failing case can be replayed. */
function prng(seed: number) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let x = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 2 ** 32;
  };
}

describe('a fuzz loop over the routes', () => {
  const odd: unknown[] = [null, true, -1, 0, 1e308, -0, 2 ** 53 + 1, 1.5, '', ' ', 'x'.repeat(1 << 20), '\u0000', '\ud800', '😀'.repeat(100), [], {}, [null], { __proto__: 1 }, { type: 'x' }];
  const rawBodies = ['{', '{"a":1,}', '[', 'nul', '"\\ud800"', '\u0000', '{"a":"\\u0000"}', '{"__proto__":{"x":1}}', ' '.repeat(1000), '1e999999'];
  const valid = (): Record<string, [string, Record<string, unknown>]> => ({
    agent: ['/v1/agents', { name: 'n', model: 'm', system: 's', tools: [{ type: 'agent_toolset_20260401', configs: [{ name: 'bash', enabled: true }] }], metadata: { k: 'v' } }],
    agentUpdate: [`/v1/agents/${ids.agent}`, { name: 'n2', version: 1 }],
    env: ['/v1/environments', { name: 'e', config: { type: 'docker', image: 'busybox', memory_mb: 64 } }],
    envUpdate: [`/v1/environments/${ids.env}`, { description: 'd' }],
    session: ['/v1/sessions', { agent: ids.agent, environment_id: ids.env, title: 't', resources: [{ type: 'github_repository', url: 'https://example.com/r.git' }] }],
    sessionUpdate: [`/v1/sessions/${ids.session}`, { title: 't', metadata: { a: null } }],
    events: [`/v1/sessions/${ids.session}/events`, { events: [{ type: 'user.message', content: [{ type: 'text', text: 'hi' }] }] }],
    fork: [`/v1/sessions/${ids.session}/fork`, { at_seq: 1 }],
    hands: [`/v1/sessions/${ids.session}/hands`, { environment_id: ids.env, name: 'extra' }],
    handOver: [`/v1/sessions/${ids.session}/hands/extra/hand_over`, { to_session_id: ids.session }],
  });

  it('finds no 500 and no oversized error in 300 mutated requests', async () => {
    const rand = prng(8);
    const pick = <T>(xs: readonly T[]) => xs[Math.floor(rand() * xs.length)]!;
    const failures: string[] = [];
    for (let i = 0; i < 300; i++) {
      const [route, body] = pick(Object.values(valid()));
      let text: string;
      if (rand() < 0.15) text = pick(rawBodies);
      else {
        const mutated: Record<string, unknown> = structuredClone(body);
        const key = rand() < 0.8 ? pick(Object.keys(mutated)) : pick(['extra', '__proto__', 'constructor', 'x'.repeat(300)]);
        if (rand() < 0.2) delete mutated[key];
        else mutated[key] = pick(odd);
        text = JSON.stringify(mutated);
      }
      const res = await api(route, { method: 'POST', body: text, headers: rand() < 0.1 ? { 'content-type': pick(['text/plain', 'application/x-www-form-urlencoded', '']) } : {} });
      const reply = await res.text();
      if (res.status >= 500 || (res.status >= 400 && reply.length > 5000)) failures.push(`#${i} POST ${route} ${text.slice(0, 120)} -> ${res.status} ${reply.slice(0, 200)}`);
    }
    expect(failures).toEqual([]);
  });

  it('finds no 500 in odd query parameters and headers', async () => {
    const routes = ['/v1/agents', `/v1/agents/${ids.agent}`, `/v1/agents/${ids.agent}/versions`, '/v1/environments', '/v1/sessions', `/v1/sessions/${ids.session}/events`, `/v1/sessions/${ids.session}/resources`];
    const params = ['limit', 'page', 'order', 'version', 'include_archived', 'created_at[gte]', 'created_at[lt]', 'types[]', 'statuses[]', 'agent_version', 'after_seq'];
    const values = ['', '-1', '0', '1e400', 'NaN', 'Infinity', '0x10', '1.5', '%00', '%FF', 'x'.repeat(4000), '2024-13-45T99:99:99Z', '😀', 'asc,desc'];
    const rand = prng(9);
    const pick = <T>(xs: readonly T[]) => xs[Math.floor(rand() * xs.length)]!;
    const failures: string[] = [];
    for (let i = 0; i < 200; i++) {
      const url = `${pick(routes)}?${pick(params)}=${pick(values)}&${pick(params)}=${pick(values)}`;
      const res = await api(url);
      const reply = await res.text();
      if (res.status >= 500 || (res.status >= 400 && reply.length > 5000)) failures.push(`#${i} GET ${url.slice(0, 150)} -> ${res.status} ${reply.slice(0, 200)}`);
    }
    // The event stream answers bad resume points before it starts streaming.
    for (const headers of [{ 'last-event-id': 'nope' }, { 'last-event-id': 'x'.repeat(4000) }, { 'last-event-id': '\u00ff' }]) {
      const ctrl = new AbortController();
      const res = await api(`/v1/sessions/${ids.session}/events/stream`, { headers, signal: ctrl.signal });
      if (res.status >= 500) failures.push(`stream ${JSON.stringify(headers).slice(0, 60)} -> ${res.status}`);
      ctrl.abort();
    }
    expect(failures).toEqual([]);
  });
});
