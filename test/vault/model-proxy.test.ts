import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ModelProxy } from '../../main/vault/model-proxy';
import type { ModelKey } from '../../main/vault/vault';

/** A stand-in upstream whose handler each test sets; it records what arrives. */
let upstream: http.Server;
let upstreamUrl: string;
let handler: (req: http.IncomingMessage, res: http.ServerResponse, body: string) => void;
const arrived: { headers: http.IncomingHttpHeaders; url: string; body: string }[] = [];

let key: ModelKey | undefined = { value: 'sk-real-key-123456', header: 'x-api-key', source: 'env' };
let proxy: ModelProxy;

beforeAll(async () => {
  upstream = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString();
      arrived.push({ headers: req.headers, url: req.url ?? '', body });
      handler(req, res, body);
    });
  });
  await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
  upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
  proxy = new ModelProxy({ keys: { modelKey: async () => key }, upstream: () => upstreamUrl });
  await proxy.listening;
});
afterAll(async () => {
  await proxy.close();
  upstream.closeAllConnections();
  await new Promise((r) => upstream.close(r));
});

const post = (token: string | undefined, path = '/v1/messages', body = '{"model":"m"}', headers: Record<string, string> = {}) =>
  fetch(`${proxy.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...(token ? { 'x-api-key': token } : {}), ...headers }, body });

describe('model proxy', () => {
  it('puts the real key on the request in place of the capability, and forwards the rest unchanged', async () => {
    handler = (_req, res) => res.writeHead(200, { 'content-type': 'application/json', 'request-id': 'req_up' }).end('{"ok":true}');
    const cap = proxy.mint('sesn_a');
    const res = await post(cap.token, '/v1/messages?beta=true', '{"model":"m","stream":false}', { 'anthropic-version': '2023-06-01', 'anthropic-beta': 'x' });
    expect(res.status).toBe(200);
    expect(res.headers.get('request-id')).toBe('req_up');
    expect(await res.json()).toEqual({ ok: true });
    const got = arrived.at(-1)!;
    expect(got.url).toBe('/v1/messages?beta=true');
    expect(got.body).toBe('{"model":"m","stream":false}');
    expect(got.headers['x-api-key']).toBe('sk-real-key-123456');
    expect(got.headers.authorization).toBeUndefined();
    expect(got.headers['anthropic-version']).toBe('2023-06-01');
    expect(got.headers['anthropic-beta']).toBe('x');
    expect(JSON.stringify(got.headers)).not.toContain(cap.token);

    // A bearer-type key goes in Authorization, and no x-api-key is sent.
    key = { value: 'oauth-token-123456', header: 'authorization', source: 'env' };
    await post(cap.token);
    expect(arrived.at(-1)!.headers.authorization).toBe('Bearer oauth-token-123456');
    expect(arrived.at(-1)!.headers['x-api-key']).toBeUndefined();
    key = { value: 'sk-real-key-123456', header: 'x-api-key', source: 'env' };
    cap.revoke();
  });

  it('streams: the first event reaches the brain before the upstream has written the rest', async () => {
    let release!: () => void;
    const later = new Promise<void>((r) => (release = r));
    handler = (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('event: message_start\ndata: {"type":"message_start"}\n\n');
      void later.then(() => res.end('event: message_stop\ndata: {"type":"message_stop"}\n\n'));
    };
    const cap = proxy.mint('sesn_b');
    const res = await post(cap.token);
    expect(res.headers.get('content-type')).toBe('text/event-stream');
    const reader = res.body!.getReader();
    const timeout = new Promise<never>((_, reject) => setTimeout(() => reject(new Error('the first event did not arrive: the proxy buffers')), 5000));
    const first = new TextDecoder().decode((await Promise.race([reader.read(), timeout])).value);
    expect(first).toContain('message_start');
    expect(first).not.toContain('message_stop');
    release();
    let rest = '';
    for (let r = await reader.read(); !r.done; r = await reader.read()) rest += new TextDecoder().decode(r.value);
    expect(rest).toContain('message_stop');
    cap.revoke();
  });

  it('passes errors through unchanged (429 with retry-after, 529), so the harness retries as before', async () => {
    const cap = proxy.mint('sesn_c');
    for (const [status, type] of [
      [429, 'rate_limit_error'],
      [529, 'overloaded_error'],
      [400, 'invalid_request_error'],
    ] as const) {
      const body = JSON.stringify({ type: 'error', error: { type, message: `upstream says ${status}` } });
      handler = (_req, res) => res.writeHead(status, { 'content-type': 'application/json', 'retry-after': '7', 'retry-after-ms': '7000' }).end(body);
      const res = await post(cap.token);
      expect(res.status).toBe(status);
      expect(res.headers.get('retry-after')).toBe('7');
      expect(res.headers.get('retry-after-ms')).toBe('7000');
      expect(await res.text()).toBe(body);
    }
    cap.revoke();
  });

  it('a stream cut upstream is cut for the brain too', async () => {
    handler = (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('event: message_start\ndata: {}\n\n');
      setTimeout(() => res.destroy(), 50);
    };
    const cap = proxy.mint('sesn_d');
    const res = await post(cap.token);
    await expect(res.text()).rejects.toThrow();
    cap.revoke();
  });

  it('refuses requests without a live capability, other paths and methods, and says when there is no key', async () => {
    handler = (_req, res) => res.writeHead(200).end('{}');
    const before = arrived.length;
    expect((await post(undefined)).status).toBe(401);
    expect((await post('sk-real-key-123456')).status).toBe(401);
    const cap = proxy.mint('sesn_e');
    expect((await post(cap.token, '/v1/files')).status).toBe(403);
    expect((await fetch(`${proxy.url}/v1/messages`, { headers: { 'x-api-key': cap.token } })).status).toBe(403);
    expect((await post(undefined, '/v1/messages', '{}', { authorization: `Bearer ${cap.token}` })).status).toBe(200);
    cap.revoke();
    const revoked = await post(cap.token);
    expect(revoked.status).toBe(401);
    expect(revoked.headers.get('x-should-retry')).toBe('false');
    key = undefined;
    const cap2 = proxy.mint('sesn_f');
    const none = await post(cap2.token);
    expect(none.status).toBe(401);
    expect(((await none.json()) as { error: { message: string } }).error.message).toMatch(/no model API key: .*ANTHROPIC_API_KEY/);
    key = { value: 'sk-real-key-123456', header: 'x-api-key', source: 'env' };
    expect(arrived.length).toBe(before + 1); // only the one with a live capability and a key got through
    cap2.revoke();
    expect(proxy.liveCapabilities).toBe(0);
  });

  it('an unreachable upstream is a 502 the harness retries (as a refused connection was)', async () => {
    const dead = new ModelProxy({ keys: { modelKey: async () => key }, upstream: () => 'http://127.0.0.1:1' });
    await dead.listening;
    const res = await fetch(`${dead.url}/v1/messages`, { method: 'POST', headers: { 'x-api-key': dead.mint('sesn_g').token }, body: '{}' });
    expect(res.status).toBe(502);
    expect(res.headers.get('x-should-retry')).toBeNull();
    await dead.close();
  });
});
