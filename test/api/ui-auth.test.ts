import fs from 'node:fs';
import path from 'node:path';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type RunningServer } from '../../main/api/http/server';
import { FORGET_AFTER_MS, FREE_FAILURES, FailureThrottle } from '../../main/api/http/throttle';
import { ServerAuth } from '../../main/api/http/ui-auth';
import { createHost, type Host } from '../../main/host';
import { request } from '../helpers/http-conn';
import { tmpDir } from '../helpers/tmp';

let host: Host;
let server: RunningServer;
let keyFile: string;
let key = 'corral-ui-auth-test-key-0123456789abcdef';
beforeAll(async () => {
  const dataDir = tmpDir();
  keyFile = path.join(dataDir, 'api-key');
  fs.writeFileSync(keyFile, `${key}\n`, { mode: 0o600 });
  host = createHost({ dataDir, workRoot: tmpDir('corral-work-') });
  server = await startServer(host, { port: 0, apiKey: key, keyFile, rendererDir: tmpDir() });
});
afterAll(async () => {
  await server.close();
  await host.close();
});

const mint = async (k = key) => fetch(`${server.url}/v1/corral/ui_link`, { method: 'POST', headers: { 'x-api-key': k } });
const linkOf = async () => ((await (await mint()).json()) as { url: string; expires_at: string });
const open = (url: string) => fetch(url, { redirect: 'manual' });

/** Opens the UI socket and resolves with its close code, or 'open' once it is accepted. */
function socket(cookie: string, origin: string | null = server.url): Promise<{ ws: WebSocket; state: 'open' | number }> {
  const headers: Record<string, string> = { cookie };
  if (origin !== null) headers.origin = origin;
  const ws = new WebSocket(`${server.url.replace('http', 'ws')}/ui/ws`, { headers });
  return new Promise((resolve) => {
    // The server accepts the upgrade then closes at once when it refuses: wait a reply either way.
    ws.once('open', () => {
      ws.send(JSON.stringify({ t: 'call', id: 1, method: 'listSessions', input: {} }));
    });
    ws.once('message', () => resolve({ ws, state: 'open' }));
    ws.once('close', (code) => resolve({ ws, state: code }));
  });
}

describe('the window credential', () => {
  it('prints no key in the link; its code works once, then not', async () => {
    const link = await linkOf();
    expect(link.url).not.toContain(key);
    expect(new URL(link.url).searchParams.get('code')).toMatch(/^[\w-]{32}$/);
    expect(Date.parse(link.expires_at) - Date.now()).toBeLessThanOrEqual(5 * 60_000);
    const first = await open(link.url);
    expect(first.status).toBe(303);
    expect(first.headers.get('location')).toBe('/');
    const setCookie = first.headers.get('set-cookie')!;
    expect(setCookie).toMatch(/^__Host-corral_ui=[\w-]{43};/);
    expect(setCookie).toMatch(/HttpOnly/i);
    expect(setCookie).toMatch(/Secure/i);
    expect(setCookie).toMatch(/SameSite=Strict/i);
    expect(setCookie).toMatch(/Path=\//);
    expect(setCookie).not.toMatch(/Domain=/i);
    expect(setCookie).not.toContain(key);
    const second = await open(link.url);
    expect(second.status).toBe(401);
    expect(second.headers.get('set-cookie')).toBeNull();
    // Two links make two different sessions.
    const other = (await open((await linkOf()).url)).headers.get('set-cookie')!;
    expect(other.split(';')[0]).not.toBe(setCookie.split(';')[0]);
  });

  it('refuses the old kind of link that carried the key', async () => {
    const res = await open(`${server.url}/?token=${encodeURIComponent(key)}`);
    expect(res.status).toBe(401);
    expect(res.headers.get('set-cookie')).toBeNull();
  });

  it('authorises the socket with the cookie and a same-origin Origin only; logout ends the session', async () => {
    const cookie = (await open((await linkOf()).url)).headers.get('set-cookie')!.split(';')[0]!;
    const ok = await socket(cookie);
    expect(ok.state).toBe('open');
    ok.ws.close();
    expect((await socket(cookie, null)).state).toBe(4403);
    expect((await socket(cookie, 'http://evil.example')).state).toBe(4403);
    expect((await socket(cookie, `http://localhost:${server.port + 1}`)).state).toBe(4403);
    expect((await socket('__Host-corral_ui=guessed')).state).toBe(4401);
    const out = await fetch(`${server.url}/ui/logout`, { method: 'POST', headers: { cookie } });
    expect(out.status).toBe(204);
    expect((await socket(cookie)).state).toBe(4401);
  });

  it('rotates the key: the old key, links and cookies die, open sockets close, the new key is written once', async () => {
    const unused = await linkOf();
    const cookie = (await open((await linkOf()).url)).headers.get('set-cookie')!.split(';')[0]!;
    const live = await socket(cookie);
    expect(live.state).toBe('open');
    const closed = new Promise<number>((resolve) => live.ws.once('close', resolve));
    const res = await fetch(`${server.url}/v1/corral/api_key/rotate`, { method: 'POST', headers: { authorization: `Bearer ${key}` } });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { api_key: string; key_file: string };
    expect(body.api_key).not.toBe(key);
    expect(body.api_key.length).toBeGreaterThanOrEqual(32);
    expect(body.key_file).toBe(keyFile);
    expect(fs.readFileSync(keyFile, 'utf8').trim()).toBe(body.api_key);
    expect(fs.statSync(keyFile).mode & 0o777).toBe(0o600);
    expect(await closed).toBe(4401);
    expect((await socket(cookie)).state).toBe(4401);
    expect((await open(unused.url)).status).toBe(401);
    expect((await mint(key)).status).toBe(401);
    key = body.api_key;
    expect((await fetch(`${server.url}/v1/agents`, { headers: { 'x-api-key': key } })).status).toBe(200);
    const fresh = (await open((await linkOf()).url)).headers.get('set-cookie')!.split(';')[0]!;
    const again = await socket(fresh);
    expect(again.state).toBe('open');
    again.ws.close();
  });

  it('answers 429 with retry-after after repeated wrong keys, even to the right key on a new connection; codes are counted apart', async () => {
    const wrong = () => fetch(`${server.url}/v1/agents`, { headers: { 'x-api-key': 'wrong-key' } });
    const statuses: number[] = [];
    for (let i = 0; i < FREE_FAILURES + 2; i++) statuses.push((await wrong()).status);
    // The old key the rotation test sent counts too: successes since then do not clear it.
    expect(statuses.slice(0, FREE_FAILURES - 2)).toEqual(Array(FREE_FAILURES - 2).fill(401));
    expect(statuses.slice(FREE_FAILURES - 2)).toEqual([429, 429, 429, 429]);
    // On a new connection (global fetch may reuse one that proved the key, which is let through).
    const right = await request(`${server.url}/v1/agents`, { headers: { 'x-api-key': key }, agent: false });
    expect(right.status).toBe(429);
    expect(Number(right.retryAfter)).toBeGreaterThan(0);
    // Link codes have a budget of their own (test/api/auth-throttle.test.ts): a wrong one is a 401.
    expect((await open(`${server.url}/?code=guess`)).status).toBe(401);
  });
});

describe('ServerAuth and FailureThrottle', () => {
  it('lets a code expire unused', () => {
    let now = 1_000_000;
    const auth = new ServerAuth({ key: 'k'.repeat(32), codeTtlMs: 1000, now: () => now });
    const { code } = auth.mintCode();
    now += 1001;
    expect(auth.redeem(code)).toBeUndefined();
    const fresh = auth.mintCode().code;
    expect(auth.redeem(fresh)).toBeDefined();
  });

  it('lets a session expire', () => {
    let now = 0;
    const auth = new ServerAuth({ key: 'k'.repeat(32), sessionTtlMs: 1000, now: () => now });
    const s = auth.redeem(auth.mintCode().code)!;
    expect(auth.sessionValid(s.token)).toBe(true);
    now += 1000;
    expect(auth.sessionValid(s.token)).toBe(false);
  });

  it('doubles the block with each failure, up to the cap, keeps bounded memory, and forgets after a quiet while', () => {
    let now = 0;
    const t = new FailureThrottle(() => now);
    const blocks: number[] = [];
    for (let i = 0; i < FREE_FAILURES + 8; i++) blocks.push(t.fail('a'));
    expect(blocks.slice(0, FREE_FAILURES - 1).every((b) => b === 0)).toBe(true);
    expect(blocks.slice(FREE_FAILURES - 1)).toEqual([1, 2, 4, 8, 16, 32, 60, 60, 60]);
    // A success does not clear it (a guesser on a shared address would be reset by others'
    // successes); 15 minutes without a failure do.
    now += FORGET_AFTER_MS;
    expect(t.retryAfter('a')).toBe(0);
    expect(t.fail('a')).toBe(0);
    for (let i = 0; i < 20_000; i++) t.fail(`addr-${i}`);
    expect(t.size).toBe(10_000);
  });
});
