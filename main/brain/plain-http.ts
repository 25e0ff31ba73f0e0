/**
 * A brain's HTTP/1.1 client for plain `http:` URLs: in the app, the host's model proxy on
 * loopback. Node's http client costs about half a millisecond of CPU per request on a 2-core
 * machine (request and response objects, header checks, the agent's socket bookkeeping), on the
 * path of every model step; this one writes a request's head and body in one write on a kept-alive
 * socket and reads the answer with the proxy's own framing (vault/http-framing.ts). HTTPS (a brain
 * started against the real API directly) keeps Node's client (model.ts).
 */
import net from 'node:net';
import { StringDecoder } from 'node:string_decoder';
import { ResponseFraming } from '../vault/http-framing';
import { watchIdle } from '../vault/idle-socket';

/** What a request's caller hears, in order: one `head` then `data`… and `end`, or `fail` at any point. */
export interface ResponseSink {
  /** The status and headers (names lower-cased; a repeated header's values joined with ", "). */
  head(status: number, headers: Record<string, string>): void;
  /** Body text as it arrives (UTF-8, never split inside a character). */
  data(text: string): void;
  end(): void;
  fail(err: Error): void;
}

/** A request under way: `cancel` drops its connection and reports nothing more. */
export interface PlainRequest {
  cancel(): void;
}

/** Idle connections kept for the next request (one request at a time is the rule; the spare covers an answer whose last bytes are late). */
const MAX_IDLE = 2;

export class PlainHttpClient {
  /** Idle connections, each with what undoes its idle watch. */
  private readonly idle = new Map<net.Socket, () => void>();
  private readonly host: string;
  private readonly port: number;

  /** `timeoutMs`: a request with no byte either way for this long fails. */
  constructor(
    private readonly url: URL,
    private readonly timeoutMs: number,
  ) {
    if (url.protocol !== 'http:') throw new Error(`PlainHttpClient speaks http: only, not ${url.protocol}`);
    this.host = url.hostname.replace(/^\[|\]$/g, '');
    this.port = Number(url.port) || 80;
  }

  /**
   * Sends `POST` with these headers (no length: it is added) and body; the answer goes to `sink`.
   * `sent` is called once the body is handed to the system (or never will be): until then it is in use.
   */
  post(headers: [string, string][], body: Buffer, sink: ResponseSink, sent: () => void = () => {}): PlainRequest {
    const reused = this.takeIdle();
    const socket = reused ?? net.connect({ host: this.host, port: this.port });
    if (!reused) socket.setNoDelay(true);
    let finished = false;
    const decoder = new StringDecoder('utf8');
    let headSent = false;
    // The head is told as soon as the framing has read it, before any of the body in the same chunk.
    const announce = () => {
      if (headSent || framing.status === undefined) return;
      headSent = true;
      sink.head(framing.status, joinHeaders(framing.headers ?? []));
    };
    const framing = new ResponseFraming({
      onBody: (bytes) => {
        announce();
        if (!finished) sink.data(decoder.write(bytes));
      },
    });
    const finish = (keep: boolean) => {
      finished = true;
      socket.off('data', onData);
      socket.off('error', onError);
      socket.off('close', onClose);
      socket.off('timeout', onTimeout);
      socket.setTimeout(0);
      if (keep) this.keep(socket);
      else socket.destroy();
    };
    const failWith = (err: Error) => {
      if (finished) return;
      finish(false);
      sink.fail(err);
    };
    const onData = (chunk: Buffer) => {
      let used: number;
      try {
        used = framing.feed(chunk);
      } catch (err) {
        return failWith(err instanceof Error ? err : new Error(String(err)));
      }
      announce();
      if (finished) return; // cancelled by the sink meanwhile
      if (used < chunk.length) return failWith(new Error('the server sent more than its answer'));
      if (!framing.done) return;
      const rest = decoder.end();
      if (rest) sink.data(rest);
      finish(!framing.closes);
      sink.end();
    };
    const onError = (err: Error) => failWith(err);
    const onClose = () => {
      if (framing.untilClose && headSent) {
        const rest = decoder.end();
        finished = true;
        if (rest) sink.data(rest);
        return sink.end();
      }
      failWith(new Error(headSent ? 'the connection closed mid-answer' : 'the connection closed before an answer'));
    };
    const onTimeout = () => failWith(new Error(`no answer in ${this.timeoutMs} ms`));
    socket.on('data', onData);
    socket.on('error', onError);
    socket.on('close', onClose);
    socket.on('timeout', onTimeout);
    socket.setTimeout(this.timeoutMs);
    const lines = [`POST ${this.url.pathname}${this.url.search} HTTP/1.1`, `host: ${this.url.host}`, ...headers.map(([n, v]) => `${n}: ${v}`), `content-length: ${body.length}`, 'connection: keep-alive'];
    // Head and body in one system call (corked: a writev, without copying the body): one wake-up of the server.
    socket.cork();
    socket.write(`${lines.join('\r\n')}\r\n\r\n`, 'latin1');
    socket.write(body, () => sent());
    socket.uncork();
    return {
      cancel: () => {
        if (!finished) finish(false);
      },
    };
  }

  /** Opens a connection for the next request unless one is idle (or opening) already. */
  preconnect(): void {
    if (this.idle.size > 0) return;
    const socket = net.connect({ host: this.host, port: this.port });
    socket.setNoDelay(true);
    this.keep(socket);
  }

  /** Closes the idle connections (a request under way keeps its own). */
  close(): void {
    for (const s of [...this.idle.keys()]) this.drop(s);
  }

  private takeIdle(): net.Socket | undefined {
    for (const [s, unwatch] of this.idle) {
      this.idle.delete(s);
      unwatch();
      // One still opening (preconnect) takes the request too: it is written once connected.
      if (!s.destroyed && (s.readyState === 'open' || s.connecting)) return s.ref();
      s.destroy();
    }
    return undefined;
  }

  private keep(socket: net.Socket): void {
    if (this.idle.size >= MAX_IDLE) return void socket.destroy();
    this.idle.set(socket, watchIdle(socket, () => this.drop(socket)));
  }

  private drop(socket: net.Socket): void {
    this.idle.get(socket)?.();
    this.idle.delete(socket);
    socket.destroy();
  }
}

function joinHeaders(headers: [string, string][]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [n, v] of headers) out[n] = n in out ? `${out[n]}, ${v}` : v;
  return out;
}
