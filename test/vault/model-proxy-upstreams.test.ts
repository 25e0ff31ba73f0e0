import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ModelProxy } from '../../main/vault/model-proxy';
import { UpstreamPool } from '../../main/vault/upstream-pool';

// The model proxy's connections to the model API are shared by the brains (upstream-pool.ts): a
// new session's first request goes on a connection opened while its brain was being bound, or
// left whole by a brain that went away; never on one left mid-answer.

let upstream: http.Server;
let upstreamUrl: string;
/** Each connection the upstream accepted, with the requests it carried (by path). */
let connections: { socket: net.Socket; requests: string[] }[];
let proxy: ModelProxy | undefined;

beforeEach(async () => {
  connections = [];
  upstream = http.createServer((req, res) => {
    connections.find((c) => c.socket === req.socket)!.requests.push(req.url ?? '');
    req.resume();
    req.on('end', () => {
      if (req.url?.includes('slow')) {
        // Half an answer, the rest never comes: the brain hangs up mid-answer.
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        return void res.write('event: message_start\ndata: {}\n\n');
      }
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': 11 }).end('{"ok":true}');
    });
  });
  upstream.on('connection', (socket) => connections.push({ socket, requests: [] }));
  await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
  upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
});
afterEach(async () => {
  await proxy?.close();
  proxy = undefined;
  upstream.closeAllConnections();
  await new Promise((r) => upstream.close(r));
});

const withKey = { modelKey: async () => ({ value: 'sk-real', header: 'x-api-key' as const, source: 'env' as const }) };

/** One brain: a connection to the proxy that sends `path`'s request and reads its answer (whole, or its first bytes when `hangUp`), then hangs up. */
function brainRequest(token: string, path: string, hangUp = false): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = net.connect(Number(new URL(proxy!.url!).port), '127.0.0.1', () => {
      s.write(`POST ${path} HTTP/1.1\r\nhost: x\r\nx-api-key: ${token}\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n{}`);
    });
    let got = '';
    s.on('data', (d) => {
      got += d.toString('latin1');
      if ((hangUp && got.includes('message_start')) || got.endsWith('{"ok":true}')) {
        s.destroy();
        resolve(got);
      }
    });
    s.on('error', reject);
    setTimeout(() => reject(new Error(`no answer to ${path}: ${got}`)), 5000).unref();
  });
}

/** A brain that sends one request, reads its whole answer, and stays connected. */
async function openBrain(token: string, path: string): Promise<net.Socket> {
  const s = net.connect(Number(new URL(proxy!.url!).port), '127.0.0.1');
  s.write(`POST ${path} HTTP/1.1\r\nhost: x\r\nx-api-key: ${token}\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n{}`);
  let got = '';
  await new Promise<void>((resolve) => s.on('data', (d) => (got += d.toString('latin1')).endsWith('{"ok":true}') && resolve()));
  return s;
}

const settle = () => new Promise((r) => setTimeout(r, 50));
const until = async (what: string, cond: () => boolean) => {
  for (let i = 0; i < 200 && !cond(); i++) await new Promise((r) => setTimeout(r, 10));
  if (!cond()) throw new Error(`never: ${what}`);
};

describe('the model proxy’s connections upstream', () => {
  it('opens one as a session with a model key gets its capability, once the API has answered this host, and the first request goes on it', async () => {
    proxy = new ModelProxy({ keys: withKey, upstream: () => upstreamUrl });
    await proxy.listening;
    const a = proxy.mint('sesn_a');
    await settle();
    // Never answered yet: nothing opened ahead (a host with no network does not dial per session).
    expect(connections).toEqual([]);
    // Session a's brain keeps its connection (and so its connection upstream).
    const kept = await openBrain(a.token, '/v1/messages?a');
    const b = proxy.mint('sesn_b');
    // Before b's request: a second connection is open, and b's request goes on it.
    await until('a connection upstream for b', () => connections.length === 2);
    expect(connections[1]!.requests).toEqual([]);
    await brainRequest(b.token, '/v1/messages?b');
    expect(connections.map((c) => c.requests)).toEqual([['/v1/messages?a'], ['/v1/messages?b']]);
    kept.destroy();
  });

  it('opens none ahead for a session without a model key', async () => {
    let key: typeof withKey.modelKey | (() => Promise<undefined>) = withKey.modelKey;
    proxy = new ModelProxy({ keys: { modelKey: () => key() }, upstream: () => upstreamUrl });
    await proxy.listening;
    const kept = await openBrain(proxy.mint('sesn_a').token, '/v1/messages?a');
    key = async () => undefined;
    proxy.mint('sesn_nokey');
    await new Promise((r) => setTimeout(r, 200));
    expect(connections).toHaveLength(1);
    kept.destroy();
  });

  it('gives the connection a brain left between answers to the next brain', async () => {
    proxy = new ModelProxy({ keys: withKey, upstream: () => upstreamUrl });
    await proxy.listening;
    const a = proxy.mint('sesn_a');
    // (A pause after each: the proxy hears the brain hang up before the next one connects.)
    await brainRequest(a.token, '/v1/messages?a1');
    await settle();
    await brainRequest(a.token, '/v1/messages?a2');
    await settle();
    a.revoke();
    const b = proxy.mint('sesn_b');
    await brainRequest(b.token, '/v1/messages?b1');
    // One connection carried all three: the warm-up for b found a's idle and opened none.
    expect(connections.map((c) => c.requests)).toEqual([['/v1/messages?a1', '/v1/messages?a2', '/v1/messages?b1']]);
  });

  it('never gives on a connection left mid-answer', async () => {
    proxy = new ModelProxy({ keys: withKey, upstream: () => upstreamUrl });
    await proxy.listening;
    const a = proxy.mint('sesn_a');
    await brainRequest(a.token, '/v1/messages?slow', true);
    // The half-answered connection is cut with the brain's.
    await until('the cut', () => connections[0]!.socket.destroyed);
    const b = proxy.mint('sesn_b');
    await brainRequest(b.token, '/v1/messages?after');
    expect(connections.map((c) => c.requests)).toEqual([['/v1/messages?slow'], ['/v1/messages?after']]);
  });

  it('drops a kept connection the upstream closes, and the next request opens another', async () => {
    proxy = new ModelProxy({ keys: withKey, upstream: () => upstreamUrl });
    await proxy.listening;
    const a = proxy.mint('sesn_a');
    await brainRequest(a.token, '/v1/messages?a');
    connections[0]!.socket.destroy(); // the server's idle timeout
    await settle();
    await brainRequest(a.token, '/v1/messages?again');
    expect(connections.map((c) => c.requests)).toEqual([['/v1/messages?a'], ['/v1/messages?again']]);
  });
});

describe('UpstreamPool', () => {
  it('closes a connection kept idle past its time', async () => {
    const pool = new UpstreamPool(100);
    const url = new URL(upstreamUrl);
    pool.warm(url); // never answered: nothing
    await settle();
    expect(connections).toHaveLength(0);
    pool.noteAnswered(url);
    pool.warm(url);
    pool.warm(url); // one idle already: no second
    expect(pool.idleCount(url)).toBe(1);
    await until('the connection', () => connections.length === 1);
    await until('the idle time out', () => pool.idleCount(url) === 0);
    await until('the close upstream', () => connections[0]!.socket.destroyed);
    pool.close();
  });
});
