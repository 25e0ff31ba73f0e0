/**
 * One brain connection to the model proxy, with one connection upstream at a time (taken from
 * the proxy's UpstreamPool, and given back when the brain goes away between answers). A request's
 * head is read and checked here and written upstream anew (the capability swapped for the real
 * key); its body and the whole response pass through as bytes, the response followed only far
 * enough to know where it ends (http-framing.ts). Node's HTTP server and client on both sides
 * cost about 0.5 ms more per model request on a 2-core machine (bench:brain), on the host's
 * event loop, which every session shares. One request at a time: the brain's next request is
 * read once the answer to this one is complete.
 */
import type net from 'node:net';
import { header, headEnd, MAX_HEAD_BYTES, parseRequestHead, ResponseFraming, type RequestHead } from './http-framing';
import { HOLD_HEADER, parseHole, type HoleSpec } from './held-hole';
import type { HeldWaiter } from './held-requests';
import type { UpstreamPool } from './upstream-pool';

/** What a connection asks of its proxy for each request. */
export interface ProxyRequestGate {
  /**
   * Checks a request and gives the real request to send (its head's lines after the request
   * line, the upstream's origin and path), or the error response to answer with.
   */
  admit(head: RequestHead): Promise<Admitted | { error: ErrorAnswer }>;
  /** Holds a request sent ahead until its hole can be filled (held-requests.ts); returns what lets it go. */
  hold?(sessionId: string, spec: HoleSpec, waiter: HeldWaiter): () => void;
}

/** A request let through: where it goes, with which headers, and what to record once it is sent. */
export interface Admitted {
  upstream: URL;
  /** The path and query upstream. */
  path: string;
  /** Its header lines after `host` (credentials included), without a length. */
  headers: [string, string][];
  used(): void;
  /** Certificates trusted for an HTTPS upstream instead of the system's. */
  ca?: string[];
  /** The session whose brain sent it (for a held request). */
  sessionId?: string;
}

/** Larger request bodies are refused (413); the API's own limit is 32 MB. */
export const MAX_BODY_BYTES = 64 * 1024 * 1024;
/** A held request's body is kept whole while its tool runs: larger ones are let go unsent. */
export const MAX_HELD_BYTES = 16 * 1024 * 1024;

/** An answer the proxy itself gives: a status and an API error body. */
export interface ErrorAnswer {
  status: number;
  type: string;
  message: string;
  /** Worth retrying (a 502 from an unreachable upstream); otherwise x-should-retry: false. */
  retryable?: boolean;
  /** The answer to a held request let go unsent: it says so in the hold header. */
  holdDropped?: boolean;
}

const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-authenticate', 'proxy-authorization', 'proxy-connection', 'te', 'trailer', 'transfer-encoding', 'upgrade', 'expect']);

/** Request headers passed upstream: all but hop-by-hop ones, the host, the length and the credentials. */
export function forwardedHeaders(head: RequestHead): [string, string][] {
  return head.headers.filter(([n]) => !HOP_BY_HOP.has(n) && n !== 'host' && n !== 'content-length' && n !== 'x-api-key' && n !== 'authorization' && n !== HOLD_HEADER);
}

export class ProxyConnection {
  private buf: Buffer = Buffer.alloc(0);
  private state: 'head' | 'admitting' | 'body' | 'answering' | 'discard' | 'holding' | 'held' | 'closed' = 'head';
  /** A request sent ahead (brain/held-request.ts): its body as read, and what lets its hold go. */
  private holding?: { r: Admitted; hole: string; chunks: Buffer[]; release?: () => void };
  private bodyLeft = 0;
  /** The upstream answered while the request's body was still being sent. */
  private answeredEarly = false;
  /** A request's head waiting to leave with its body's first bytes. */
  private pendingHead?: Buffer;
  private up?: net.Socket;
  /** Where `up` goes, and what undoes this connection's listeners on it. */
  private upTarget?: { url: URL; ca?: string[]; unlisten(): void };
  private upOrigin?: string;
  private framing?: ResponseFraming;
  /** Bytes of the response already passed to the brain (a failure after the first is a cut). */
  private answered = 0;

  constructor(
    private readonly client: net.Socket,
    private readonly gate: ProxyRequestGate,
    private readonly upstreams: UpstreamPool,
  ) {
    client.setNoDelay(true);
    client.on('data', (d: Buffer) => this.safely(() => this.onClientData(d)));
    client.on('error', () => {});
    // The brain hung up (an interrupt, or it died): the request upstream stops too.
    client.on('close', () => this.close());
  }

  private onClientData(d: Buffer): void {
    this.buf = this.buf.length ? Buffer.concat([this.buf, d]) : d;
    this.pump();
  }

  /** Moves the brain's bytes on as far as the state allows: a body upstream, a head read and checked. */
  private pump(): void {
    for (;;) {
      if (this.state === 'holding') {
        const n = Math.min(this.bodyLeft, this.buf.length);
        if (n > 0) this.holding!.chunks.push(this.buf.subarray(0, n));
        this.buf = this.buf.subarray(n);
        this.bodyLeft -= n;
        if (this.bodyLeft > 0) return;
        this.state = 'held';
        return this.hold();
      }
      if (this.state === 'body' || this.state === 'discard') {
        const n = Math.min(this.bodyLeft, this.buf.length);
        const head = n > 0 ? this.pendingHead : undefined;
        if (head) this.pendingHead = undefined;
        const up = this.up;
        // (An upstream gone meanwhile has been answered for: the rest of the body is dropped.)
        if (this.state === 'body' && n > 0 && up && !up.destroyed && !writeTogether(up, head ? [head, this.buf.subarray(0, n)] : [this.buf.subarray(0, n)])) {
          // Upstream is slower than the brain: the brain waits (a body is never held here whole).
          this.client.pause();
          up.once('drain', () => this.state !== 'closed' && this.resume());
        }
        this.buf = this.buf.subarray(n);
        this.bodyLeft -= n;
        if (this.bodyLeft > 0) return;
        // An upstream that answered before the body was all sent (a 413, say) was answered for.
        this.state = this.state === 'body' && !this.answeredEarly ? 'answering' : 'head';
        this.answeredEarly = false;
        continue;
      }
      if (this.state !== 'head') {
        // Whatever follows is the next request: read once this one is answered (a head, or a
        // body still being checked, waits here; anything more waits in the socket).
        if (this.buf.length > MAX_HEAD_BYTES) this.client.pause();
        return;
      }
      const end = headEnd(this.buf);
      if (end > MAX_HEAD_BYTES || (end < 0 && this.buf.length > MAX_HEAD_BYTES)) {
        return this.refuse({ status: 431, type: 'invalid_request_error', message: 'request head larger than 32 KiB' });
      }
      if (end < 0) return;
      const parsed = parseRequestHead(this.buf.subarray(0, end - 4).toString('latin1'));
      this.buf = this.buf.subarray(end);
      if ('status' in parsed) return this.refuse({ status: parsed.status, type: 'invalid_request_error', message: parsed.message });
      if (parsed.length > MAX_BODY_BYTES) return this.refuse({ status: 413, type: 'request_too_large', message: `request bodies are limited to ${MAX_BODY_BYTES / 1024 ** 2} MiB` });
      this.state = 'admitting';
      const closeAfter = header(parsed.head, 'connection')?.toLowerCase() === 'close' || parsed.head.version === '1.0';
      this.gate.admit(parsed.head).then(
        // Guarded like the socket's handlers: a throw here would be an unhandled rejection.
        (r) => this.safely(() => {
          if (this.state !== 'admitting') return;
          // Refused: its body is read and dropped; the connection stays for the next request.
          if ('error' in r) return this.answerError(r.error, closeAfter, parsed.length);
          const hole = header(parsed.head, HOLD_HEADER);
          if (hole === undefined) return this.forward(r, parsed.length);
          if (parsed.length > MAX_HELD_BYTES || closeAfter) {
            return this.answerError(dropped(closeAfter ? 'a request on a closing connection is not held' : 'the request is too large to hold'), closeAfter, parsed.length);
          }
          this.holding = { r, hole, chunks: [] };
          this.state = 'holding';
          this.bodyLeft = parsed.length;
          this.resume();
          this.pump();
        }),
        (err: unknown) => this.state === 'admitting' && this.refuse({ status: 500, type: 'api_error', message: `the model proxy failed: ${err instanceof Error ? err.message : String(err)}` }),
      );
      return;
    }
  }

  /** Sends the admitted request upstream: its body follows from the brain, or is `whole` (a held request, filled). */
  private forward(r: Admitted, length: number, whole?: Buffer[]): void {
    const origin = r.upstream.origin;
    if (this.up && (this.upOrigin !== origin || this.up.destroyed)) this.dropUpstream();
    if (!this.up) this.connect(r.upstream, r.ca);
    const host = r.upstream.host;
    const lines = [`POST ${r.path} HTTP/1.1`, `host: ${host}`, ...r.headers.map(([n, v]) => `${n}: ${v}`), `content-length: ${length}`, 'connection: keep-alive'];
    this.framing = new ResponseFraming();
    this.answered = 0;
    const head = Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1');
    if (whole) {
      // In memory already (at most MAX_HELD_BYTES): it goes at once, its pieces uncopied.
      writeTogether(this.up!, [head, ...whole]);
      this.state = 'answering';
      this.bodyLeft = 0;
    } else {
      // Without a body (or none here yet), the head goes now.
      if (length === 0 || this.buf.length === 0) this.up!.write(head);
      else this.pendingHead = head;
      this.state = length > 0 ? 'body' : 'answering';
      this.bodyLeft = length;
    }
    this.resume();
    this.pump();
    // The ledger's record (an append to the log) waits until the request has left: not on its way.
    r.used();
  }

  /** A held request's body is in: it waits for its tool's result (or is let go at once). */
  private hold(): void {
    const h = this.holding!;
    const body = Buffer.concat(h.chunks);
    h.chunks = [];
    const spec = parseHole(h.hole, body.length);
    if (!spec || !this.gate.hold || !h.r.sessionId) return this.letGo('its hold header is not one this proxy reads');
    h.release = this.gate.hold(h.r.sessionId, spec, {
      fill: (text) => this.safely(() => this.fill(body, spec, text)),
      drop: (why) => this.safely(() => this.letGo(why)),
    });
  }

  private fill(body: Buffer, spec: HoleSpec, text: string): void {
    if (this.state !== 'held') return;
    const { r } = this.holding!;
    this.holding = undefined;
    const filled = [body.subarray(0, spec.at), Buffer.from(text, 'utf8'), body.subarray(spec.at + spec.length)];
    this.forward(r, filled.reduce((n, b) => n + b.length, 0), filled);
  }

  private letGo(why: string): void {
    if (this.state !== 'held') return;
    this.holding = undefined;
    this.answerError(dropped(why), false);
  }

  private connect(target: URL, ca?: string[]): void {
    const up = this.upstreams.take(target, ca);
    this.up = up;
    this.upOrigin = target.origin;
    const onData = (d: Buffer) => this.safely(() => this.onUpstreamData(up, d));
    const onError = (err: Error) => this.onUpstreamGone(up, err.message);
    const onClose = () => this.onUpstreamGone(up, 'the connection closed');
    up.on('data', onData);
    up.on('error', onError);
    up.on('close', onClose);
    this.upTarget = {
      url: target,
      ca,
      unlisten: () => {
        up.off('data', onData);
        up.off('error', onError);
        up.off('close', onClose);
      },
    };
  }

  private onUpstreamData(up: net.Socket, d: Buffer): void {
    if (up !== this.up || !this.framing) return void up.destroy();
    let used: number;
    try {
      used = this.framing.feed(d);
    } catch {
      return this.close();
    }
    this.answered += used;
    if (!this.client.write(used === d.length ? d : d.subarray(0, used))) {
      // A brain that does not read holds up its own answer, not the host's memory.
      up.pause();
      this.client.once('drain', () => up.resume());
    }
    if (!this.framing.done) return;
    if (this.upTarget) this.upstreams.noteAnswered(this.upTarget.url, this.upTarget.ca);
    const closes = this.framing.closes;
    this.framing = undefined;
    if (closes) this.dropUpstream();
    if (this.state === 'answering') {
      this.state = 'head';
      this.resume();
      this.pump();
    } else if (this.state === 'body') this.answeredEarly = true;
  }

  private onUpstreamGone(up: net.Socket, why: string): void {
    if (up !== this.up) return;
    this.up = undefined;
    const framing = this.framing;
    if (!framing) return; // idle: the next request connects again
    this.framing = undefined;
    // A response that ends with its connection is complete now; any other is cut.
    if (framing.untilClose) return this.close();
    // Nothing reached the brain yet: as a refused connection to the API itself, a 502 it retries.
    if (this.answered === 0) {
      this.state = 'answering';
      return this.answerError({ status: 502, type: 'api_error', message: `the model proxy could not reach ${this.upOrigin}: ${why}`, retryable: true }, true);
    }
    this.close();
  }

  /** Answers with the proxy's own error; a body of `dropBytes` that follows is read and dropped. */
  private answerError(e: ErrorAnswer, thenClose: boolean, dropBytes = 0): void {
    const body = JSON.stringify({ type: 'error', error: { type: e.type, message: e.message } });
    const head = [
      `HTTP/1.1 ${e.status} ${STATUS_TEXT[e.status] ?? 'Error'}`,
      'content-type: application/json',
      `content-length: ${Buffer.byteLength(body)}`,
      ...(e.retryable ? [] : ['x-should-retry: false']),
      ...(e.holdDropped ? [`${HOLD_HEADER}: dropped`] : []),
      `connection: ${thenClose ? 'close' : 'keep-alive'}`,
    ];
    this.client.write(`${head.join('\r\n')}\r\n\r\n${body}`);
    if (thenClose) {
      this.state = 'closed';
      this.dropUpstream();
      return void this.client.end();
    }
    this.state = dropBytes > 0 ? 'discard' : 'head';
    this.bodyLeft = dropBytes;
    this.resume();
    this.pump();
  }

  /** A request that cannot be read: answered, and the connection closed (what follows is unknown). */
  private refuse(e: ErrorAnswer): void {
    this.answerError(e, true);
  }

  /** Nothing a brain sends (or an upstream answers) may throw in the host: the connection ends instead. */
  private safely(f: () => void): void {
    try {
      f();
    } catch (err) {
      console.error(`corral: model proxy connection: ${err instanceof Error ? err.message : String(err)}`);
      this.close();
    }
  }

  /** Reading the brain again if it was paused (a call each time costs a system call on some machines). */
  private resume(): void {
    if (this.client.isPaused()) this.client.resume();
  }

  private dropUpstream(): void {
    const up = this.up;
    this.up = undefined;
    up?.destroy();
  }

  close(): void {
    // Between answers (nothing of a request sent, nothing of an answer owed), the upstream
    // connection is whole and goes to the next brain; otherwise it is cut with the brain's.
    const up = this.up;
    const target = this.upTarget;
    this.holding?.release?.();
    this.holding = undefined;
    const between = this.state === 'head' || this.state === 'admitting' || this.state === 'discard' || this.state === 'holding' || this.state === 'held';
    if (up && target && between && !this.framing && !this.pendingHead && !up.destroyed) {
      this.up = undefined;
      target.unlisten();
      up.resume(); // a brain slow to read may have left it paused
      this.upstreams.give(up, target.url, target.ca);
    }
    this.state = 'closed';
    this.dropUpstream();
    this.client.destroy();
  }
}

/** The answer to a held request that is not sent: the brain sends its own. */
const dropped = (why: string): ErrorAnswer => ({ status: 409, type: 'invalid_request_error', message: `held request not sent: ${why}`, holdDropped: true });

const STATUS_TEXT: Record<number, string> = { 409: 'Conflict', 413: 'Content Too Large', 400: 'Bad Request', 401: 'Unauthorized', 403: 'Forbidden', 411: 'Length Required', 431: 'Request Header Fields Too Large', 500: 'Internal Server Error', 501: 'Not Implemented', 502: 'Bad Gateway', 505: 'HTTP Version Not Supported' };

/**
 * Writes `pieces` in one system call (a head with its body's first bytes: one packet, one
 * wake-up upstream) without copying them into one buffer (a request is the whole conversation).
 * Returns what `write` does: false when the socket's buffer is over its mark.
 */
function writeTogether(socket: net.Socket, pieces: Buffer[]): boolean {
  if (pieces.length === 1) return socket.write(pieces[0]!);
  socket.cork();
  let ok = true;
  for (const p of pieces) ok = socket.write(p) && ok;
  socket.uncork();
  return ok;
}
