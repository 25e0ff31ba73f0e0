import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { heldBlockText, USER_TURN_TYPES } from '../../main/brain/held-fill';
import { formatHole, type HoleSpec } from '../../main/vault/held-hole';
import { HeldRequests } from '../../main/vault/held-requests';
import { ModelProxy } from '../../main/vault/model-proxy';
import type { LoggedEvent } from '../../main/session/types';

// A brain sends its next request ahead while a tool runs (brain/held-request.ts); the model proxy
// holds it and the host fills its hole with the tool's result as that is logged. Only that
// result, arriving as the session's next user turn, fills it; anything else lets it go unsent.

const ev = (seq: number, type: string, more: Record<string, unknown> = {}) => ({ id: `sevt_${seq}`, seq, processed_at: '', type, ...more }) as LoggedEvent;
const result = (seq: number, toolUseId: string, text = 'out') => ev(seq, 'agent.tool_result', { tool_use_id: toolUseId, content: [{ type: 'text', text }], is_error: false });
const spec = (over: Partial<HoleSpec> = {}): HoleSpec => ({ toolUseId: 'sevt_5', afterSeq: 4, at: 0, length: 0, maxChars: 1000, ...over });

/** The registry over a log held in an array (nextAfter reads it as the host's log would). */
function registry(log: LoggedEvent[] = []) {
  const held = new HeldRequests({
    render: heldBlockText,
    userTurn: (e) => USER_TURN_TYPES.has(e.type),
    nextAfter: (_s, seq) => log.find((e) => e.seq > seq && USER_TURN_TYPES.has(e.type)),
  });
  const outcomes: string[] = [];
  const waiter = { fill: (t: string) => outcomes.push(`fill ${t}`), drop: (why: string) => outcomes.push(`drop ${why}`) };
  return { held, outcomes, waiter, log: (e: LoggedEvent) => (log.push(e), held.logged('s', e)) };
}

describe('HeldRequests', () => {
  it("fills with the call's result, the rest of the reply (the assistant's) coming between", () => {
    const r = registry();
    r.held.hold('s', spec(), r.waiter);
    r.log(ev(5, 'agent.message', { content: [{ type: 'text', text: 'hi' }] }));
    r.log(ev(6, 'span.model_request_end'));
    expect(r.outcomes).toEqual([]);
    r.log(result(7, 'sevt_5'));
    expect(r.outcomes).toEqual([`fill ${heldBlockText(result(7, 'sevt_5'))}`]);
    expect(r.held.size).toBe(0);
  });

  it('lets it go when a user turn comes first, when the result is too large, or when another request of the session is held', () => {
    const typed = registry();
    typed.held.hold('s', spec(), typed.waiter);
    typed.log(ev(5, 'user.message', { content: [{ type: 'text', text: 'wait' }] }));
    typed.log(result(6, 'sevt_5'));
    expect(typed.outcomes).toEqual(["drop the session's next user turn is not this call's result"]);

    const big = registry();
    big.held.hold('s', spec({ maxChars: 50 }), big.waiter);
    big.log(result(5, 'sevt_5', 'x'.repeat(60)));
    expect(big.outcomes).toEqual(['drop the result does not fit the hole']);

    const twice = registry();
    twice.held.hold('s', spec(), twice.waiter);
    twice.held.hold('s', spec({ toolUseId: 'sevt_9', afterSeq: 8 }), { fill: () => {}, drop: () => {} });
    expect(twice.outcomes).toEqual(['drop another request of the session was held']);
  });

  it('a request held after its result was logged (a fast tool) is filled at once; one after a typed message is let go', () => {
    const fast = registry([ev(5, 'agent.message'), result(6, 'sevt_5')]);
    fast.held.hold('s', spec(), fast.waiter);
    expect(fast.outcomes).toEqual([`fill ${heldBlockText(result(6, 'sevt_5'))}`]);
    expect(fast.held.size).toBe(0);

    const late = registry([ev(5, 'user.message'), result(6, 'sevt_5')]);
    late.held.hold('s', spec(), late.waiter);
    expect(late.outcomes[0]).toMatch(/^drop/);
  });

  it('the function a hold returns lets it go (the brain hung up): a later result fills nothing', () => {
    const r = registry();
    const release = r.held.hold('s', spec(), r.waiter);
    release();
    r.log(result(5, 'sevt_5'));
    expect(r.outcomes).toEqual([]);
    expect(r.held.size).toBe(0);
  });
});

describe('the model proxy holding a request', () => {
  let upstream: http.Server;
  let seen: { headers: http.IncomingHttpHeaders; body: string }[];
  let proxy: ModelProxy;

  beforeEach(async () => {
    seen = [];
    upstream = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        seen.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': 11 }).end('{"ok":true}');
      });
    });
    await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
    proxy = await startProxy(() => undefined);
  });

  /** The proxy in front of the upstream, with `nextAfter` as the host's log read. */
  async function startProxy(nextAfter: () => LoggedEvent | undefined): Promise<ModelProxy> {
    const url = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
    const p = new ModelProxy({
      keys: { modelKey: async () => ({ value: 'sk-real', header: 'x-api-key', source: 'env' }) },
      upstream: () => url,
      held: { render: heldBlockText, userTurn: (e) => USER_TURN_TYPES.has(e.type), nextAfter },
    });
    await p.listening;
    return p;
  }
  afterEach(async () => {
    await proxy.close();
    upstream.closeAllConnections();
    await new Promise((r) => upstream.close(r));
  });

  /** A brain's connection: writes raw requests, collects what comes back. */
  function brain(): Promise<{ socket: net.Socket; got: () => string; until: (s: string) => Promise<void> }> {
    return new Promise((resolve) => {
      let got = '';
      const waiters: { s: string; done: () => void }[] = [];
      const socket = net.connect(Number(new URL(proxy.url!).port), '127.0.0.1', () =>
        resolve({
          socket,
          got: () => got,
          until: (s) => new Promise((done) => (got.split(s).length > 1 ? done() : waiters.push({ s, done }))),
        }),
      );
      socket.on('data', (d) => {
        got += d.toString('utf8');
        for (const w of waiters.splice(0)) got.includes(w.s) ? w.done() : waiters.push(w);
      });
    });
  }

  const PLACEHOLDER = '{"hole":"ééé"}';
  const heldRequest = (token: string, toolUseId: string) => {
    const body = Buffer.from(`{"before":"ü",${PLACEHOLDER},"after":1}`, 'utf8');
    const at = Buffer.from('{"before":"ü",', 'utf8').length;
    const hole = formatHole({ toolUseId, afterSeq: 4, at, length: Buffer.byteLength(PLACEHOLDER), maxChars: 1000 });
    return Buffer.concat([Buffer.from(`POST /v1/messages HTTP/1.1\r\nhost: x\r\nx-api-key: ${token}\r\nx-corral-hold: ${hole}\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n`, 'latin1'), body]);
  };

  it('sends it on as the result is logged: the hole filled, the length right, the hold header not passed on', async () => {
    const cap = proxy.mint('sesn_a');
    const b = await brain();
    b.socket.write(heldRequest(cap.token, 'sevt_5'));
    await expect.poll(() => proxy.held!.size).toBe(1);
    expect(seen).toHaveLength(0); // held: nothing upstream yet
    const r = result(5, 'sevt_5', 'the tool’s output');
    proxy.held!.logged('sesn_a', r);
    await b.until('{"ok":true}');
    expect(seen).toHaveLength(1);
    expect(seen[0]!.body).toBe(`{"before":"ü",${heldBlockText(r)},"after":1}`);
    expect(Number(seen[0]!.headers['content-length'])).toBe(Buffer.byteLength(seen[0]!.body));
    expect(seen[0]!.headers['x-corral-hold']).toBeUndefined();
    expect(seen[0]!.headers['x-api-key']).toBe('sk-real');
    b.socket.destroy();
  });

  it('lets it go with a 409 that says so, and the connection serves the next request', async () => {
    const cap = proxy.mint('sesn_b');
    const b = await brain();
    b.socket.write(heldRequest(cap.token, 'sevt_5'));
    await expect.poll(() => proxy.held!.size).toBe(1);
    proxy.held!.logged('sesn_b', ev(5, 'user.message', { content: [] }));
    await b.until('\r\n\r\n{');
    expect(b.got()).toMatch(/^HTTP\/1\.1 409 /);
    expect(b.got()).toContain('x-corral-hold: dropped');
    expect(seen).toHaveLength(0);
    b.socket.write(`POST /v1/messages HTTP/1.1\r\nhost: x\r\nx-api-key: ${cap.token}\r\ncontent-length: 2\r\n\r\n{}`);
    await b.until('{"ok":true}');
    expect(seen.map((s) => s.body)).toEqual(['{}']);
    b.socket.destroy();
  });

  it('a body over 16 MiB is not held: read, dropped and answered 409; the connection goes on', async () => {
    const cap = proxy.mint('sesn_d');
    const b = await brain();
    const size = 16 * 1024 * 1024 + 1;
    const hole = formatHole({ toolUseId: 'sevt_5', afterSeq: 4, at: 0, length: 2, maxChars: 1000 });
    b.socket.write(`POST /v1/messages HTTP/1.1\r\nhost: x\r\nx-api-key: ${cap.token}\r\nx-corral-hold: ${hole}\r\ncontent-length: ${size}\r\n\r\n`);
    b.socket.write(Buffer.alloc(size, 0x20));
    await b.until('\r\n\r\n{');
    expect(b.got()).toMatch(/^HTTP\/1\.1 409 /);
    expect(b.got()).toContain('too large to hold');
    expect(proxy.held!.size).toBe(0);
    b.socket.write(`POST /v1/messages HTTP/1.1\r\nhost: x\r\nx-api-key: ${cap.token}\r\ncontent-length: 2\r\n\r\n{}`);
    await b.until('{"ok":true}');
    expect(seen.map((x) => x.body)).toEqual(['{}']);
    b.socket.destroy();
  });

  it('a failure while holding (the session deleted: its log cannot be read) closes that connection, nothing else', async () => {
    await proxy.close();
    proxy = await startProxy(() => {
      throw new Error('session sesn_gone not found');
    });
    const cap = proxy.mint('sesn_gone');
    const b = await brain();
    const closed = new Promise<void>((r) => b.socket.once('close', () => r()));
    b.socket.write(heldRequest(cap.token, 'sevt_5'));
    await closed;
    expect(proxy.held!.size).toBe(0);
    // The proxy still serves others.
    const other = await brain();
    other.socket.write(`POST /v1/messages HTTP/1.1\r\nhost: x\r\nx-api-key: ${proxy.mint('sesn_other').token}\r\ncontent-length: 2\r\n\r\n{}`);
    await other.until('{"ok":true}');
    other.socket.destroy();
  });

  it('a brain that hangs up lets its hold go; a malformed hole header is let go at once', async () => {
    const cap = proxy.mint('sesn_c');
    const b = await brain();
    b.socket.write(heldRequest(cap.token, 'sevt_5'));
    await expect.poll(() => proxy.held!.size).toBe(1);
    b.socket.destroy();
    await expect.poll(() => proxy.held!.size).toBe(0);
    proxy.held!.logged('sesn_c', result(5, 'sevt_5'));
    expect(seen).toHaveLength(0);

    const bad = await brain();
    bad.socket.write(`POST /v1/messages HTTP/1.1\r\nhost: x\r\nx-api-key: ${cap.token}\r\nx-corral-hold: sevt_5; at=99999\r\ncontent-length: 2\r\n\r\n{}`);
    await bad.until('\r\n\r\n{');
    expect(bad.got()).toMatch(/^HTTP\/1\.1 409 /);
    expect(proxy.held!.size).toBe(0);
    bad.socket.destroy();
  });
});
