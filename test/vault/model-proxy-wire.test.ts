import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ModelProxy } from '../../main/vault/model-proxy';
import type { ModelKey } from '../../main/vault/vault';

// The model proxy reads a brain's request heads itself and passes the bytes on (raw, over a
// connection kept with the upstream): what a smuggler would try, and what a kept-alive
// connection carries one request after another.

let upstream: http.Server;
let upstreamUrl: string;
const arrived: { headers: http.IncomingHttpHeaders; url: string; body: string }[] = [];
let proxy: ModelProxy;
let token: string;
const upstreamSockets = new Set<net.Socket>();

beforeAll(async () => {
  upstream = http.createServer((req, res) => {
    // Too large, said at once (as a front server may), while the body is still coming.
    if (req.url?.includes('early')) res.writeHead(413, { 'content-type': 'application/json' }).end('{"type":"error"}');
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString();
      arrived.push({ headers: req.headers, url: req.url ?? '', body });
      if (req.url?.includes('early')) return; // answered below, before the body was read
      if (req.url?.includes('chunked')) {
        // Chunked, with a trailer: the proxy must find where it ends to serve the next request.
        res.writeHead(200, { 'content-type': 'text/event-stream', trailer: 'x-done' });
        res.write('event: a\ndata: {}\n\n');
        res.addTrailers({ 'x-done': 'yes' });
        res.end('event: b\ndata: {}\n\n');
      } else res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ echo: body }));
    });
  });
  upstream.on('connection', (s) => upstreamSockets.add(s));
  await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
  upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
  proxy = new ModelProxy({ keys: { modelKey: async () => ({ value: 'sk-real', header: 'x-api-key', source: 'env' }) }, upstream: () => upstreamUrl });
  await proxy.listening;
  token = proxy.mint('sesn_wire').token;
});
afterAll(async () => {
  await proxy.close();
  upstream.closeAllConnections();
  await new Promise((r) => upstream.close(r));
});

/** Sends raw bytes on one connection and collects what comes back until it closes or `until` matches. */
function raw(bytes: string, until?: (text: string) => boolean): Promise<string> {
  return new Promise((resolve) => {
    const port = Number(new URL(proxy.url!).port);
    const s = net.connect(port, '127.0.0.1', () => s.write(bytes));
    let got = '';
    const done = () => (s.destroy(), resolve(got));
    s.on('data', (d) => {
      got += d.toString('latin1');
      if (until?.(got)) done();
    });
    s.on('close', done);
    s.on('error', done);
    setTimeout(done, 5000);
  });
}

const req = (body: string, extra = '', path = '/v1/messages') =>
  `POST ${path} HTTP/1.1\r\nhost: x\r\nx-api-key: ${token}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n${extra}\r\n${body}`;
const statuses = (text: string) => [...text.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((m) => Number(m[1]));

describe('the model proxy on the wire', () => {
  it('refuses what could be read two ways, before anything reaches the upstream', async () => {
    const before = arrived.length;
    const cases: [string, number][] = [
      [`POST /v1/messages HTTP/1.1\r\nx-api-key: ${token}\r\ntransfer-encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n`, 501],
      [`POST /v1/messages HTTP/1.1\r\nx-api-key: ${token}\r\ncontent-length: 2\r\ncontent-length: 40\r\n\r\n{}`, 400],
      [`POST /v1/messages HTTP/1.1\r\nx-api-key: ${token}\r\nx-a: 1\nx-b: 2\r\ncontent-length: 2\r\n\r\n{}`, 400],
      [`POST /v1/messages HTTP/1.1\r\nx-api-key: ${token}\r\n folded: yes\r\ncontent-length: 2\r\n\r\n{}`, 400],
      [`POST /v1/messages HTTP/1.1\r\nx-api-key : ${token}\r\ncontent-length: 2\r\n\r\n{}`, 400],
      [`POST /v1/messages HTTP/1.1\r\nx-api-key: ${token}\r\ncontent-length: -1\r\n\r\n{}`, 400],
      [`POST /v1/messages HTTP/1.1\r\nx-api-key: ${token}\r\nx-big: ${'a'.repeat(40_000)}\r\n\r\n`, 431],
      [`POST /v1/messages HTTP/2.0\r\nx-api-key: ${token}\r\n\r\n`, 400],
    ];
    for (const [bytes, status] of cases) {
      const answer = await raw(bytes);
      expect(statuses(answer), bytes.slice(0, 80)).toEqual([status]);
      expect(answer, JSON.stringify(answer.slice(0, 300))).toMatch(/"type":"error"/);
    }
    expect(arrived.length).toBe(before);
  });

  it('never sends a key that would end its header line', async () => {
    const bad = new ModelProxy({ keys: { modelKey: async () => ({ value: 'sk-a\r\nx-injected: 1', header: 'x-api-key', source: 'env' }) }, upstream: () => upstreamUrl });
    await bad.listening;
    const before = arrived.length;
    const res = await fetch(`${bad.url}/v1/messages`, { method: 'POST', headers: { 'x-api-key': bad.mint('s').token }, body: '{}' });
    expect(res.status).toBe(500);
    expect(await res.text()).not.toContain('sk-a');
    expect(arrived.length).toBe(before);
    await bad.close();
  });

  it('serves requests one after another on a kept-alive connection: a refused one, a chunked answer, a plain one', async () => {
    const before = arrived.length;
    // A refused request's body is read and dropped: the next request on the connection is read right.
    const refused = `POST /v1/files HTTP/1.1\r\nx-api-key: ${token}\r\ncontent-length: 9\r\n\r\nPOST /x\r\n`;
    const text = await raw(refused + req('{"n":1}', '', '/v1/messages?chunked=1') + req('{"n":2}'), (t) => t.includes('"echo"'));
    expect(statuses(text)).toEqual([403, 200, 200]);
    expect(text).toContain('event: b');
    expect(text).toContain('{"echo":"{\\"n\\":2}"}');
    const got = arrived.slice(before);
    expect(got.map((a) => a.body)).toEqual(['{"n":1}', '{"n":2}']);
    // The capability never reaches the upstream; the real key does.
    for (const a of got) expect([a.headers['x-api-key'], JSON.stringify(a.headers).includes(token)]).toEqual(['sk-real', false]);
    expect(got[0]!.url).toBe('/v1/messages?chunked=1');
  });

  it('an upstream that answers before the body is all sent: the answer reaches the brain and the next request is served', async () => {
    const big = JSON.stringify({ pad: 'x'.repeat(2_000_000) });
    const text = await raw(req(big, '', '/v1/messages?early=1') + req('{"n":6}'), (t) => t.includes('"echo"'));
    expect(statuses(text)).toEqual([413, 200]);
    expect(text).toContain('{"echo":"{\\"n\\":6}"}');
  });

  it('an upstream that drops the kept connection while idle is connected to again for the next request', async () => {
    const first = await raw(req('{"n":3}'), (t) => t.includes('"echo"'));
    expect(statuses(first)).toEqual([200]);
    const port = Number(new URL(proxy.url!).port);
    const s = net.connect(port, '127.0.0.1');
    let got = '';
    s.on('data', (d) => (got += d.toString('latin1')));
    s.write(req('{"n":4}'));
    await expect.poll(() => got.includes('"echo"')).toBe(true);
    for (const u of upstreamSockets) u.destroy(); // the upstream's idle timeout, say
    await new Promise((r) => setTimeout(r, 50));
    s.write(req('{"n":5}'));
    await expect.poll(() => (got.match(/"echo"/g) ?? []).length).toBe(2);
    expect(statuses(got)).toEqual([200, 200]);
    s.destroy();
  });
});

describe('the model proxy to an HTTPS upstream', () => {
  it('speaks TLS upstream, checks its certificate, and streams the answer', async () => {
    const { makeUpstreamCa } = await import('../helpers/vault-fixtures');
    const https = await import('node:https');
    const ca = await makeUpstreamCa('model-upstream');
    const seen: (string | undefined)[] = [];
    const server = https.createServer(await ca.tlsFor('localhost'), (req, res) => {
      seen.push(req.headers['x-api-key'] as string | undefined);
      req.resume();
      req.on('end', () => res.writeHead(200, { 'content-type': 'text/event-stream' }).end('event: message_stop\ndata: {}\n\n'));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const url = `https://localhost:${(server.address() as AddressInfo).port}`;
    const keys = { modelKey: async (): Promise<ModelKey> => ({ value: 'sk-tls', header: 'x-api-key', source: 'env' }) };
    const trusting = new ModelProxy({ keys, upstream: () => url, upstreamCa: [ca.certPem] });
    const strange = new ModelProxy({ keys, upstream: () => url }); // the system's roots do not know this CA
    try {
      await Promise.all([trusting.listening, strange.listening]);
      const ok = await fetch(`${trusting.url}/v1/messages`, { method: 'POST', headers: { 'x-api-key': trusting.mint('s').token }, body: '{}' });
      expect([ok.status, await ok.text()]).toEqual([200, 'event: message_stop\ndata: {}\n\n']);
      expect(seen).toEqual(['sk-tls']);
      const refused = await fetch(`${strange.url}/v1/messages`, { method: 'POST', headers: { 'x-api-key': strange.mint('s').token }, body: '{}' });
      expect(refused.status).toBe(502);
      expect(await refused.text()).toMatch(/certificate/);
      expect(seen).toEqual(['sk-tls']);
    } finally {
      await Promise.all([trusting.close(), strange.close()]);
      server.closeAllConnections();
      server.close();
    }
  });
});
