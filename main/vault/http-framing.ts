/**
 * Just enough HTTP/1.1 for the model proxy to pass bytes through (model-proxy-connection.ts):
 * reading a request's head strictly, and finding where a response ends on a kept-alive
 * connection (content-length, chunked, or the connection's close) without parsing its body.
 * A brain's client of the proxy (brain/plain-http.ts) uses the same framing to take the body out.
 */

/** A request head as sent, header names lower-cased, in order. */
export interface RequestHead {
  method: string;
  target: string;
  version: '1.0' | '1.1';
  headers: [name: string, value: string][];
}

/** A head that cannot be passed on, and the status that says why. */
export interface HeadError {
  status: 400 | 411 | 431 | 501 | 505;
  message: string;
}

/** Larger heads are refused (431): a brain's requests have a dozen short headers. */
export const MAX_HEAD_BYTES = 32 * 1024;
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const END = Buffer.from('\r\n\r\n');

/** Where the head in `buf` ends (the index just past its blank line), or -1 while incomplete. */
export function headEnd(buf: Buffer): number {
  const i = buf.indexOf(END);
  return i < 0 ? -1 : i + 4;
}

/**
 * Parses a request head (without its blank line). Strict where leniency lets a request mean
 * one thing here and another upstream: no bare CR or LF, no NUL, no folded lines, no spaces
 * before a colon, one content-length and no transfer-encoding (a brain sends a length).
 */
export function parseRequestHead(text: string): { head: RequestHead; length: number } | HeadError {
  const lines = text.split('\r\n');
  const start = /^([A-Z]+) (\S+) HTTP\/(1\.[01])$/.exec(lines[0] ?? '');
  if (!start) return { status: 400, message: 'not an HTTP/1.x request line' };
  const headers: [string, string][] = [];
  for (const line of lines.slice(1)) {
    if (/[\r\n\0]/.test(line)) return { status: 400, message: 'a header holds a bare CR, LF or NUL' };
    const colon = line.indexOf(':');
    const name = colon > 0 ? line.slice(0, colon) : '';
    if (!TOKEN.test(name)) return { status: 400, message: 'a malformed header line' };
    headers.push([name.toLowerCase(), line.slice(colon + 1).trim()]);
  }
  const head: RequestHead = { method: start[1]!, target: start[2]!, version: start[3] as '1.0' | '1.1', headers };
  if (headers.some(([n]) => n === 'transfer-encoding')) return { status: 501, message: 'request bodies must be sent with a content-length, not a transfer-encoding' };
  const lengths = headers.filter(([n]) => n === 'content-length');
  if (lengths.length > 1) return { status: 400, message: 'more than one content-length' };
  if (lengths.length === 0) return { head, length: 0 };
  if (!/^\d{1,12}$/.test(lengths[0]![1])) return { status: 400, message: 'a malformed content-length' };
  return { head, length: Number(lengths[0]![1]) };
}

/** The first value of a header, if any. */
export function header(head: { headers: [string, string][] }, name: string): string | undefined {
  return head.headers.find(([n]) => n === name)?.[1];
}

/**
 * Follows a response's bytes as they pass, and says when it is complete: after its head, a body
 * of content-length bytes, or chunks up to the last one and its trailer, or none at all (1xx
 * before the real response, 204, 304, or the answer to a HEAD). A response framed by neither
 * ends when its connection does (`untilClose`).
 */
export class ResponseFraming {
  /** Set once the head is read: the response's status. */
  status?: number;
  /** The server will close the connection after this response. */
  closes = false;
  /** Set once the head is read: its header lines after the status line, names lower-cased, in order. */
  headers?: [name: string, value: string][];
  private head: Buffer = Buffer.alloc(0);
  private mode: 'head' | 'length' | 'chunk-size' | 'chunk-data' | 'chunk-crlf' | 'trailer' | 'close' | 'done' = 'head';
  private left = 0;
  private line = '';

  /**
   * `noBody`: the answer to a HEAD. `onBody` takes the body's bytes as they pass (the chunks'
   * data, without their sizes and line ends), for a reader of the response rather than a relay.
   */
  constructor(private readonly opts: { noBody?: boolean; onBody?: (bytes: Buffer) => void } = {}) {}

  get done(): boolean {
    return this.mode === 'done';
  }

  get untilClose(): boolean {
    return this.mode === 'close';
  }

  /** Feeds the next bytes; returns how many belong to this response (the rest is the next one's). */
  feed(chunk: Buffer): number {
    let i = 0;
    while (i < chunk.length && this.mode !== 'done') {
      switch (this.mode) {
        case 'head': {
          const joined = Buffer.concat([this.head, chunk.subarray(i)]);
          const end = headEnd(joined);
          if (end < 0) {
            if (joined.length > MAX_HEAD_BYTES) throw new Error('the upstream sent a response head larger than 32 KiB');
            this.head = joined;
            return chunk.length;
          }
          i += end - this.head.length;
          this.head = Buffer.alloc(0);
          this.startBody(joined.subarray(0, end - 4).toString('latin1'));
          break;
        }
        case 'length': {
          const n = Math.min(this.left, chunk.length - i);
          if (n > 0) this.opts.onBody?.(chunk.subarray(i, i + n));
          i += n;
          this.left -= n;
          if (this.left === 0) this.mode = 'done';
          break;
        }
        case 'chunk-size':
        case 'trailer': {
          const nl = chunk.indexOf(0x0a, i);
          const upto = nl < 0 ? chunk.length : nl + 1;
          this.line += chunk.subarray(i, upto).toString('latin1');
          i = upto;
          if (this.line.length > 4096) throw new Error('the upstream sent a malformed chunked response');
          if (nl < 0) break;
          const line = this.line.replace(/\r?\n$/, '');
          this.line = '';
          if (this.mode === 'trailer') {
            if (line === '') this.mode = 'done';
          } else {
            const size = parseInt(line.split(';')[0]!.trim(), 16);
            if (!Number.isFinite(size) || size < 0) throw new Error('the upstream sent a malformed chunk size');
            if (size === 0) this.mode = 'trailer';
            else [this.mode, this.left] = ['chunk-data', size];
          }
          break;
        }
        case 'chunk-data': {
          const n = Math.min(this.left, chunk.length - i);
          if (n > 0) this.opts.onBody?.(chunk.subarray(i, i + n));
          i += n;
          this.left -= n;
          if (this.left === 0) [this.mode, this.left] = ['chunk-crlf', 2];
          break;
        }
        case 'chunk-crlf': {
          const n = Math.min(this.left, chunk.length - i);
          i += n;
          this.left -= n;
          if (this.left === 0) this.mode = 'chunk-size';
          break;
        }
        case 'close':
          if (i < chunk.length) this.opts.onBody?.(chunk.subarray(i));
          return chunk.length;
      }
    }
    return i;
  }

  private startBody(text: string): void {
    const lines = text.split('\r\n');
    const status = /^HTTP\/1\.[01] (\d{3})/.exec(lines[0] ?? '');
    if (!status) throw new Error('the upstream sent a malformed status line');
    const code = Number(status[1]);
    // An interim response (100 Continue): the real one follows on the same connection.
    if (code >= 100 && code < 200) return;
    this.status = code;
    const headers = lines.slice(1).map((l): [string, string] => [l.slice(0, Math.max(0, l.indexOf(':'))).trim().toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]);
    this.headers = headers;
    const get = (name: string) => headers.filter(([n]) => n === name).map(([, v]) => v);
    this.closes = get('connection').some((v) => /(^|,)\s*close\s*(,|$)/i.test(v)) || lines[0]!.startsWith('HTTP/1.0');
    if (this.opts.noBody || code === 204 || code === 304) this.mode = 'done';
    else if (get('transfer-encoding').some((v) => /chunked\s*$/i.test(v))) this.mode = 'chunk-size';
    else if (get('content-length').length > 0) {
      this.left = Number(get('content-length')[0]);
      this.mode = this.left > 0 ? 'length' : 'done';
    } else this.mode = 'close';
  }
}
