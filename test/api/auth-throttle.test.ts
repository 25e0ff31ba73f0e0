import http from 'node:http';
import WebSocket from 'ws';
import { afterEach, describe, expect, it } from 'vitest';
import { startServer, type RunningServer } from '../../main/api/http/server';
import { FREE_FAILURES } from '../../main/api/http/throttle';
import { createHost, type Host } from '../../main/host';
import { request } from '../helpers/http-conn';
import { tmpDir } from '../helpers/tmp';

/**
 * All local clients share 127.0.0.1. A local process that sends wrong keys must not lock out
 * the window's cookie session, a link the user opens, or the user's client that already proved
 * the key on its connection — and must not get a guessing oracle or unlimited tries either.
 */

const KEY = 'corral-throttle-test-key-0123456789abcdef';
let host: Host;
let server: RunningServer;
const agents: http.Agent[] = [];

async function start(): Promise<void> {
  host = createHost({ dataDir: tmpDir(), workRoot: tmpDir('corral-work-') });
  await host.started;
  server = await startServer(host, { port: 0, apiKey: KEY, rendererDir: tmpDir() });
}
afterEach(async () => {
  for (const a of agents.splice(0)) a.destroy();
  await server?.close();
  await host?.close();
});

/** One kept-alive connection: every request of this client goes over the same socket. */
function connection(): http.Agent {
  const a = new http.Agent({ keepAlive: true, maxSockets: 1 });
  agents.push(a);
  return a;
}
const api = (key: string, agent: http.Agent | false = false) => request(`${server.url}/v1/agents`, { headers: { 'x-api-key': key }, agent });
/** A guesser: wrong keys until the address is blocked. */
async function guessUntilBlocked(): Promise<void> {
  const statuses: number[] = [];
  for (let i = 0; i < FREE_FAILURES + 2; i++) statuses.push((await api(`wrong-key-${i}`)).status);
  expect(statuses.at(-1)).toBe(429);
}
async function mintLink(): Promise<string> {
  const res = await fetch(`${server.url}/v1/corral/ui_link`, { method: 'POST', headers: { 'x-api-key': KEY }, keepalive: false });
  expect(res.status).toBe(200);
  return ((await res.json()) as { url: string }).url;
}
/** Opens the window's socket with a cookie; 'open' once a call is answered, else the close code. */
function windowSocket(cookie: string): Promise<'open' | number> {
  const ws = new WebSocket(`${server.url.replace('http', 'ws')}/ui/ws`, { headers: { cookie, origin: server.url } });
  return new Promise((resolve) => {
    ws.once('open', () => ws.send(JSON.stringify({ t: 'call', id: 1, method: 'listSessions', input: {} })));
    ws.once('message', () => {
      ws.close();
      resolve('open');
    });
    ws.once('close', (code) => resolve(code));
  });
}

describe('wrong keys from one local client', () => {
  it('leave the window alone: its cookie session works and a new link opens', async () => {
    await start();
    const link = await mintLink();
    const cookie = (await request(await mintLink(), { agent: false })).setCookie!.split(';')[0]!;
    await guessUntilBlocked();
    expect(await windowSocket(cookie)).toBe('open');
    // Codes have a budget of their own: the link the user opens now works.
    const opened = await request(link, { agent: false });
    expect(opened.status).toBe(303);
    expect(opened.setCookie).toMatch(/corral_ui=/);
  });

  it('do not lock out a client whose connection already proved the key; any other connection gets 429 unchecked', async () => {
    await start();
    const user = connection();
    const first = await api(KEY, user);
    expect(first.status).toBe(200);
    await guessUntilBlocked();
    // The user's client, on the connection it proved the key on, goes on working.
    const during = await api(KEY, user);
    expect(during.status).toBe(200);
    expect(during.localPort).toBe(first.localPort);
    // No oracle: the right key on any other connection is refused like a wrong one, unchecked.
    const fresh = await api(KEY);
    const wrong = await api('another-wrong-key');
    expect([fresh.status, wrong.status]).toEqual([429, 429]);
    expect(Number(fresh.retryAfter)).toBeGreaterThan(0);
    // A wrong key on a proven connection takes its trust away (and counts).
    expect((await api('wrong-on-the-user-connection', user)).status).toBe(429);
    expect((await api(KEY, user)).status).toBe(429);
  });

  it('are not reset by another client\'s successes (the guesser gets no fresh tries from them)', async () => {
    await start();
    const user = connection();
    for (let i = 0; i < FREE_FAILURES - 1; i++) expect((await api(`wrong-${i}`)).status).toBe(401);
    expect((await api(KEY, user)).status).toBe(200);
    // Before: the success cleared the address, and the guesser had ten more tries.
    expect((await api('wrong-again')).status).toBe(429);
  });
});

describe('wrong link codes from one local client', () => {
  it('do not hold back the right key', async () => {
    await start();
    const codes: number[] = [];
    for (let i = 0; i < FREE_FAILURES + 2; i++) codes.push((await request(`${server.url}/?code=guess-${i}`, { agent: false })).status);
    expect(codes.at(-1)).toBe(429);
    expect((await api(KEY)).status).toBe(200);
    // And the code budget stays spent: a right code now waits too (no oracle for codes).
    expect((await request(await mintLink(), { agent: false })).status).toBe(429);
  });
});
