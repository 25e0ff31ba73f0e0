import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { uiSessionHeaders } from '../helpers/ui-session';
import { startTestServer, type TestServer } from '../helpers/server';

let t: TestServer;
let sessionId: string;
let cookie: string;
beforeAll(async () => {
  t = await startTestServer();
  cookie = (await uiSessionHeaders(t.server.url, t.apiKey)).cookie;
  const agent = await t.client.beta.agents.create({ name: 'ui-agent', model: 'm' });
  const env = await t.client.beta.environments.create({ name: 'e' });
  sessionId = (await t.client.beta.sessions.create({ agent: agent.id, environment_id: env.id, title: 'ui' })).id;
});
afterAll(() => t.close());

interface Msg {
  t: string;
  id: number | null;
  ok?: boolean;
  value?: unknown;
  error?: { kind: string; message: string };
  item?: { seq: number; type: string };
}

function connect(opts: { cookie?: string; origin?: string | null } = {}) {
  const headers: Record<string, string> = {};
  if (opts.cookie) headers.cookie = opts.cookie;
  // A browser's page sends its own origin; null: none at all (a script replaying the cookie).
  const origin = opts.origin === undefined ? t.server.url : opts.origin;
  if (origin !== null) headers.origin = origin;
  const ws = new WebSocket(`${t.server.url.replace('http', 'ws')}/ui/ws`, { headers });
  const inbox: Msg[] = [];
  const waiters: (() => void)[] = [];
  ws.on('message', (d) => {
    inbox.push(JSON.parse(String(d)) as Msg);
    waiters.splice(0).forEach((w) => w());
  });
  const closed = new Promise<number>((resolve) => ws.on('close', (code) => resolve(code)));
  const next = async (pred: (m: Msg) => boolean): Promise<Msg> => {
    for (;;) {
      const i = inbox.findIndex(pred);
      if (i >= 0) return inbox.splice(i, 1)[0]!;
      await new Promise<void>((r) => waiters.push(r));
    }
  };
  const opened = new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  return { ws, next, closed, opened, send: (m: unknown) => ws.send(JSON.stringify(m)) };
}

describe('the UI WebSocket channel', () => {
  it('closes an unauthorised socket with 4401 and a cross-origin one with 4403', async () => {
    expect(await connect().closed).toBe(4401);
    expect(await connect({ cookie: '__Host-corral_ui=forged' }).closed).toBe(4401);
    expect(await connect({ cookie, origin: 'http://evil.example' }).closed).toBe(4403);
    // A valid cookie without any Origin (replayed from outside a browser) is refused too.
    expect(await connect({ cookie, origin: null }).closed).toBe(4403);
    expect(await connect({ cookie, origin: 'null' }).closed).toBe(4403);
  });

  it('answers calls, validates inputs and streams events without gaps', async () => {
    const c = connect({ cookie });
    await c.opened;
    c.send({ t: 'call', id: 1, method: 'listSessions', input: {} });
    const list = await c.next((m) => m.id === 1);
    expect(list.ok).toBe(true);
    expect((list.value as { id: string; title: string }[]).find((s) => s.id === sessionId)?.title).toBe('ui');

    c.send({ t: 'call', id: 2, method: 'getEvents', input: { sessionId, limit: -1 } });
    expect((await c.next((m) => m.id === 2)).error?.kind).toBe('invalid_input');
    c.send({ t: 'call', id: 3, method: 'getSession', input: { sessionId: 'sesn_missing' } });
    expect((await c.next((m) => m.id === 3)).error?.kind).toBe('not_found');
    c.send({ t: 'call', id: 4, method: 'dropDatabase', input: {} });
    expect((await c.next((m) => m.id === 4)).error?.message).toMatch(/unknown method/);

    t.host.log.emitEvent(sessionId, { type: 'user.message', content: [{ type: 'text', text: 'before watch' }] });
    c.send({ t: 'watch', id: 5, stream: 'watchEvents', input: { sessionId } });
    const first = await c.next((m) => m.id === 5 && m.t === 'item');
    expect(first.item).toMatchObject({ seq: 1, type: 'user.message' });
    c.send({ t: 'call', id: 6, method: 'sendMessage', input: { sessionId, text: 'from the ui' } });
    expect((await c.next((m) => m.id === 6)).ok).toBe(true);
    expect((await c.next((m) => m.id === 5 && m.t === 'item')).item!.seq).toBe(2);

    // Resume from a position: only what came after it.
    c.send({ t: 'watch', id: 7, stream: 'watchEvents', input: { sessionId, after: 1 } });
    expect((await c.next((m) => m.id === 7 && m.t === 'item')).item!.seq).toBe(2);
    c.send({ t: 'unwatch', id: 5 });
    c.send({ t: 'unwatch', id: 7 });
    c.ws.close();
  });

  it('replays stored events as text messages equal to the log, large and non-ASCII ones included', async () => {
    const agent = await t.client.beta.agents.create({ name: 'replay', model: 'm' });
    const env = await t.client.beta.environments.create({ name: 'e' });
    const id = (await t.client.beta.sessions.create({ agent: agent.id, environment_id: env.id })).id;
    const texts = ['small', 'ünïcödé 😀 \u2028 "quoted"', '😀x'.repeat(400_000), 'after the large one'];
    for (const text of texts) t.host.log.emitEvent(id, { type: 'user.message', content: [{ type: 'text', text }] });
    const c = connect({ cookie });
    const binary: boolean[] = [];
    c.ws.on('message', (_d, isBinary) => binary.push(isBinary));
    await c.opened;
    c.send({ t: 'watch', id: 1, stream: 'watchEvents', input: { sessionId: id } });
    const items = [];
    for (let i = 0; i < texts.length; i++) items.push((await c.next((m) => m.id === 1 && m.t === 'item')).item);
    expect(items).toEqual(t.host.log.getEvents(id));
    expect(binary.every((b) => !b)).toBe(true);
    c.ws.close();
  });
});
