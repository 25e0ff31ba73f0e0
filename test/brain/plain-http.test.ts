/** The brain's own HTTP/1.1 client of the model proxy (plain-http.ts), against raw servers that write exact bytes. */
import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createAnthropicCaller, type ModelError } from '../../main/brain/model';
import { PlainHttpClient, type ResponseSink } from '../../main/brain/plain-http';

const servers: net.Server[] = [];
const clients: PlainHttpClient[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) c.close();
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
});

/** A server that hands each request (head and body read in full) to `answer` with its socket. */
async function server(answer: (socket: net.Socket, request: string, index: number) => void): Promise<{ url: URL; connections: net.Socket[] }> {
  const connections: net.Socket[] = [];
  let index = 0;
  const s = net.createServer((socket) => {
    connections.push(socket);
    let buf = '';
    socket.on('data', (d) => {
      buf += d.toString('latin1');
      for (;;) {
        const end = buf.indexOf('\r\n\r\n');
        if (end < 0) return;
        const length = Number(/content-length: (\d+)/i.exec(buf.slice(0, end))?.[1] ?? 0);
        if (buf.length < end + 4 + length) return;
        const request = buf.slice(0, end + 4 + length);
        buf = buf.slice(end + 4 + length);
        answer(socket, request, index++);
      }
    });
    socket.on('error', () => {});
  });
  servers.push(s);
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  return { url: new URL(`http://127.0.0.1:${(s.address() as net.AddressInfo).port}/v1/messages`), connections };
}

/** Posts and collects what the sink hears, up to its end or failure. */
function post(client: PlainHttpClient, body = '{"x":1}') {
  const heard = { status: 0, headers: {} as Record<string, string>, text: '', ended: false, error: undefined as string | undefined };
  const done = new Promise<typeof heard>((resolve) => {
    const sink: ResponseSink = {
      head: (status, headers) => Object.assign(heard, { status, headers }),
      data: (t) => void (heard.text += t),
      end: () => resolve(Object.assign(heard, { ended: true })),
      fail: (err) => resolve(Object.assign(heard, { error: err.message })),
    };
    client.post([['content-type', 'application/json']], Buffer.from(body), sink);
  });
  return done;
}
const client = (url: URL, timeoutMs = 10_000) => {
  const c = new PlainHttpClient(url, timeoutMs);
  clients.push(c);
  return c;
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('the plain HTTP client', () => {
  it('sends one well-formed request with a length, and keeps its connection for the next; one the server closed is not reused', async () => {
    const requests: string[] = [];
    const { url, connections } = await server((socket, request) => {
      requests.push(request);
      socket.write('HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: 5\r\n\r\nhello');
    });
    const c = client(url);
    expect(await post(c, '{"a":"é"}')).toMatchObject({ status: 200, text: 'hello', ended: true, headers: { 'content-type': 'text/plain', 'content-length': '5' } });
    expect(await post(c)).toMatchObject({ text: 'hello', ended: true });
    expect(connections).toHaveLength(1);
    expect(requests[0]).toBe(`POST /v1/messages HTTP/1.1\r\nhost: ${url.host}\r\ncontent-type: application/json\r\ncontent-length: 10\r\nconnection: keep-alive\r\n\r\n{"a":"é"}`.replace('é', Buffer.from('é').toString('latin1')));
    // The server drops the idle connection: the next request opens another instead of failing.
    connections[0]!.destroy();
    await sleep(50);
    expect(await post(c)).toMatchObject({ text: 'hello', ended: true });
    expect(connections).toHaveLength(2);
  });

  it('opens its connection ahead when asked, and the next request goes on it, even while it is still opening', async () => {
    const { url, connections } = await server((socket) => socket.write('HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok'));
    const c = client(url);
    c.preconnect();
    c.preconnect(); // one is opening already: no second
    await sleep(50);
    expect(connections).toHaveLength(1);
    expect(await post(c)).toMatchObject({ text: 'ok', ended: true });
    expect(connections).toHaveLength(1);
    // Asked and used in the same tick: the request waits for the connection rather than opening another.
    const fresh = client(url);
    fresh.preconnect();
    expect(await post(fresh)).toMatchObject({ text: 'ok', ended: true });
    expect(connections).toHaveLength(2);
    // Nobody listening: a request on a failed opening fails as one on its own connection would.
    const closed = await server(() => {});
    const gone = client(closed.url);
    await new Promise((r) => servers.pop()!.close(r));
    gone.preconnect();
    expect((await post(gone)).error).toMatch(/ECONNREFUSED/);
  });

  it('takes the body out of chunks (sizes and line ends dropped), keeps characters split between chunks whole, and reads until close when unframed', async () => {
    const smile = Buffer.from('a😀b');
    const { url } = await server((socket, _request, i) => {
      if (i === 0) {
        socket.write('HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\nx-two: 1\r\nx-two: 2\r\n\r\n');
        // The emoji's four bytes are split across two chunks, sent apart.
        socket.write(`3\r\n${smile.subarray(0, 3).toString('latin1')}\r\n`, 'latin1');
        setTimeout(() => socket.write(`${(smile.length - 3).toString(16)}\r\n${smile.subarray(3).toString('latin1')}\r\n0\r\n\r\n`, 'latin1'), 30);
      } else {
        socket.end('HTTP/1.1 200 OK\r\nconnection: close\r\n\r\nall of it');
      }
    });
    const c = client(url);
    expect(await post(c)).toMatchObject({ text: 'a😀b', ended: true, headers: { 'x-two': '1, 2' } });
    expect(await post(c)).toMatchObject({ text: 'all of it', ended: true, error: undefined });
  });

  it('fails, never hangs: a cut mid-answer, a close before any answer, no byte for the timeout, nobody listening', async () => {
    const { url } = await server((socket, _request, i) => {
      if (i === 0) socket.end('HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\nshort');
      else if (i === 1) socket.destroy();
      // else: never answers
    });
    expect(await post(client(url))).toMatchObject({ status: 200, text: 'short', ended: false, error: 'the connection closed mid-answer' });
    expect(await post(client(url))).toMatchObject({ status: 0, ended: false, error: 'the connection closed before an answer' });
    expect(await post(client(url, 300))).toMatchObject({ status: 0, error: 'no answer in 300 ms' });
    const gone = new URL(url);
    await new Promise((r) => servers.pop()!.close(r));
    expect((await post(client(gone))).error).toMatch(/ECONNREFUSED/);
  });

  it('after cancel the sink hears nothing more, and the connection is closed', async () => {
    const { url, connections } = await server((socket) => {
      socket.write('HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5\r\nfirst\r\n');
      setTimeout(() => !socket.destroyed && socket.write('6\r\nsecond\r\n0\r\n\r\n'), 100);
    });
    const c = client(url);
    const heard: string[] = [];
    const closed = new Promise<void>((resolve) => {
      const request = c.post([], Buffer.from('{}'), {
        head: () => heard.push('head'),
        data: (t) => {
          heard.push(t);
          request.cancel();
        },
        end: () => heard.push('end'),
        fail: (e) => heard.push(`fail ${e.message}`),
      });
      const wait = () => (connections[0]?.destroyed ? resolve() : setTimeout(wait, 10));
      wait();
    });
    await closed;
    await sleep(200);
    expect(heard).toEqual(['head', 'first']);
  });

  it('through the model caller: an abort while the model has not answered yet ends the call at once as interrupted', async () => {
    const { url, connections } = await server(() => {});
    const caller = createAnthropicCaller({ apiKey: 'k', baseURL: url.origin });
    const ctrl = new AbortController();
    const pending = caller.stream({ model: 'm', max_tokens: 10, messages: [] }, { onBlock: async () => {} }, ctrl.signal).catch((e: ModelError) => e.failure);
    while (connections.length === 0) await sleep(5);
    ctrl.abort();
    expect(await pending).toMatchObject({ aborted: true, retryable: false });
    await sleep(50);
    expect(connections[0]!.destroyed || connections[0]!.readableEnded).toBe(true);
  });
});
