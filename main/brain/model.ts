import https from 'node:https';
import { BodyBuffer } from './body-buffer';
import type { BuiltRequest } from './context';
import { MessageAssembler, SseParser, streamErrorFailure, type StreamEvent } from './model-stream';
import { HOLD_HEADER } from '../vault/held-hole';
import { PlainHttpClient, type PlainRequest, type ResponseSink } from './plain-http';

/** A content block the model finished. */
export type FinishedBlock =
  | { type: 'text'; text: string }
  | { type: 'thinking'; thinking: string; signature: string }
  | { type: 'redacted_thinking'; data: string }
  | { type: 'tool_use'; id: string; name: string; input: Record<string, unknown> }
  /** A server tool's call or result (main/brain/server-tools.ts): the block as the model sent it, input parsed. */
  | { type: 'server_tool_use' | 'server_tool_result'; block: Record<string, unknown> };

/** Token usage of one request, in the shape of `span.model_request_end.model_usage`. */
export interface ModelUsage {
  input_tokens: number;
  output_tokens: number;
  cache_read_input_tokens: number;
  cache_creation_input_tokens: number;
}

/** Why a request failed, and whether trying again could help. */
export interface ModelFailure {
  errorType: 'model_rate_limited_error' | 'model_overloaded_error' | 'model_request_failed_error';
  message: string;
  retryable: boolean;
  /** The server's `retry-after` (or `retry-after-ms`), when it sent one. */
  retryAfterMs?: number;
  status?: number;
  aborted?: boolean;
}

export class ModelError extends Error {
  constructor(readonly failure: ModelFailure) {
    super(failure.message);
  }
}

/** Callbacks of a streaming request. */
export interface StreamHandlers {
  /** Called, in order and awaited, as each content block completes. */
  onBlock(block: FinishedBlock, index: number): Promise<void>;
  /** A content block began (its type as the API names it: text, thinking, tool_use, …). */
  onBlockStart?(index: number, type: string): void;
  /** Text (or thinking) as it is written (not logged per delta). */
  onTextDelta?(index: number, text: string): void;
}

/** Something that runs one streaming Messages request. */
export interface ModelCaller {
  stream(params: BuiltRequest['params'], handlers: StreamHandlers, signal: AbortSignal): Promise<{ stopReason: string; usage: ModelUsage }>;
  /**
   * Opens the connection the next request will use, if none is open, so that a request about to
   * be built does not wait for it (a brain just bound to a session). Plain HTTP only.
   */
  preconnect?(): void;
  /**
   * Sends now a request the model proxy holds until the host puts a tool's result in its hole
   * (held-request.ts). Plain HTTP only (the proxy is the host).
   */
  hold?(body: string, hole: string, signal: AbortSignal): HeldCall;
}

/** A request sent ahead and held by the proxy: taken up as a model step, or cancelled. */
export interface HeldCall {
  /** As `ModelCaller.stream`; rejects with HeldNotSent when the host did not send it on. */
  stream(handlers: StreamHandlers, signal: AbortSignal): Promise<{ stopReason: string; usage: ModelUsage }>;
  cancel(): void;
}

/** The body of a streaming request for `params`, as the caller sends it (a held request is compared with it). */
export function requestBody(params: BuiltRequest['params']): string {
  return JSON.stringify({ ...params, stream: true });
}

/** A held request the proxy let go unsent (or that failed before any answer): send it normally. */
export class HeldNotSent extends Error {}

const INTERRUPTED: ModelFailure = { errorType: 'model_request_failed_error', message: 'interrupted', retryable: false, aborted: true };
const API_VERSION = '2023-06-01';
/** Error bodies are read up to this size (their message is what matters). */
const MAX_ERROR_BODY = 64 * 1024;

/**
 * The real caller: one streaming `POST /v1/messages` per request over a kept-alive connection,
 * parsed as it arrives, no retries (the harness retries and logs it). A small client of its own
 * rather than the SDK: on the path of every model step, it costs a fraction of a millisecond
 * each way where the SDK's fetch and web streams cost about one (bench:brain). Over plain HTTP
 * (the host's model proxy, always, in the app) it writes and reads the socket itself
 * (plain-http.ts); over HTTPS it uses Node's client.
 */
export function createAnthropicCaller(opts: { apiKey?: string; baseURL?: string; timeoutMs?: number } = {}): ModelCaller {
  const apiKey = opts.apiKey ?? process.env.ANTHROPIC_API_KEY;
  if (!apiKey) {
    // No point sending a request that cannot authenticate: say what to do instead.
    return {
      stream: async () => {
        throw new ModelError({ errorType: 'model_request_failed_error', message: 'no model API key: set ANTHROPIC_API_KEY for Corral', retryable: false });
      },
    };
  }
  const base = new URL(opts.baseURL || process.env.ANTHROPIC_BASE_URL || 'https://api.anthropic.com');
  const url = new URL(`${base.pathname.replace(/\/+$/, '')}/v1/messages`, base);
  const timeoutMs = opts.timeoutMs ?? 10 * 60_000;
  const plain = url.protocol === 'http:' ? plainTransport(url, timeoutMs) : undefined;
  const send = plain ?? nodeTransport(url, timeoutMs);
  const headers: [string, string][] = [
    ['content-type', 'application/json'],
    ['accept', 'text/event-stream'],
    ['anthropic-version', API_VERSION],
    ['x-api-key', apiKey],
    ['user-agent', 'corral'],
  ];

  /**
   * Sends the request; resolves once a 200 answer's head is in (its body then goes to `body`),
   * or fails with the API's error. `started` gets the request at once, so an abort can cut it
   * while the model has not answered yet.
   */
  function post(body: string, signal: AbortSignal, answer: BodySink, started: (r: PlainRequest) => void, hole?: string): Promise<void> {
    return new Promise((resolve, reject) => {
      if (signal.aborted) return reject(new ModelError(INTERRUPTED));
      // An abort before the answer's head: the request is cut (by the caller) and this ends now.
      const aborted = () => settle(() => reject(new ModelError(INTERRUPTED)));
      signal.addEventListener('abort', aborted, { once: true });
      const settle = (f: () => void) => {
        signal.removeEventListener('abort', aborted);
        f();
      };
      let status = 0;
      let responseHeaders: Record<string, string> = {};
      /** The text of an error answer (set when the status is not 200). */
      let errorBody: string | undefined;
      started(
        send(hole ? [...headers, [HOLD_HEADER, hole]] : headers, body, {
          head: (code, h) => {
            status = code;
            responseHeaders = h;
            if (code === 200) settle(resolve);
            else errorBody = '';
          },
          data: (text) => {
            if (errorBody === undefined) answer.data(text);
            else if (errorBody.length < MAX_ERROR_BODY) errorBody += text;
          },
          end: () => {
            if (errorBody === undefined) answer.end();
            else if (hole && responseHeaders[HOLD_HEADER] === 'dropped') settle(() => reject(new HeldNotSent(errorBody!.slice(0, 500))));
            else settle(() => reject(new ModelError(httpFailure(status, responseHeaders, errorBody!.slice(0, MAX_ERROR_BODY)))));
          },
          fail: (err) => {
            if (status === 200) answer.fail(err);
            else if (hole && !signal.aborted) settle(() => reject(new HeldNotSent(err.message)));
            else settle(() => reject(new ModelError(signal.aborted ? INTERRUPTED : connectionFailure(err))));
          },
        }),
      );
    });
  }

  /** Sends a request; its answer's events queue until `consume` takes them, in order. */
  function open(body: string, signal: AbortSignal, hole?: string): Opened {
    let current: PlainRequest | undefined;
    // Events are queued as bytes arrive and handled in order (a block's handler is awaited):
    // whatever arrived before a cut is handled before the cut is reported.
    const queue: QueueItem[] = [];
    let wake: (() => void) | undefined;
    let ended = false;
    const push = (item: QueueItem) => {
      if (ended) return;
      if ('end' in item) ended = true;
      queue.push(item);
      wake?.();
    };
    const stop = () => {
      current?.cancel();
      push({ end: true, failure: INTERRUPTED });
    };
    signal.addEventListener('abort', stop, { once: true });
    const parser = new SseParser((data) => {
      try {
        push({ event: JSON.parse(data) as StreamEvent });
      } catch {
        push({ end: true, failure: { errorType: 'model_request_failed_error', message: 'the model sent an event that is not JSON', retryable: true } });
      }
    });
    const posted = post(
      body,
      signal,
      { data: (text) => parser.feed(text), end: () => push({ end: true }), fail: (err) => push({ end: true, failure: connectionFailure(err) }) },
      (r) => (current = r),
      hole,
    );
    posted.catch(() => {}); // awaited by consume
    return {
      posted,
      next: async () => {
        if (queue.length === 0) await new Promise<void>((resolve) => (wake = resolve));
        wake = undefined;
        return queue.shift()!;
      },
      cancel: () => current?.cancel(),
      done: () => signal.removeEventListener('abort', stop),
    };
  }

  async function consume(req: Opened, handlers: StreamHandlers, signal: AbortSignal): Promise<{ stopReason: string; usage: ModelUsage }> {
    const assembler = new MessageAssembler(handlers);
    try {
      if (signal.aborted) throw new ModelError(INTERRUPTED);
      await req.posted;
      for (;;) {
        const item = await req.next();
        if ('end' in item) {
          if (signal.aborted) throw new ModelError(INTERRUPTED);
          if (item.failure) throw new ModelError(item.failure);
          break;
        }
        if (item.event.type === 'error') throw new ModelError(streamErrorFailure(item.event));
        await assembler.take(item.event);
        // The answer is whole: no need to wait for the body's last bytes (they free the
        // connection for the next request as they come).
        if (assembler.complete) break;
      }
      if (signal.aborted) throw new ModelError(INTERRUPTED);
      if (!assembler.complete) throw new ModelError(connectionFailure(new Error('the answer ended before message_stop')));
      return { stopReason: assembler.stopReason, usage: assembler.usage };
    } catch (err) {
      req.cancel();
      if (err instanceof HeldNotSent) throw err;
      if (signal.aborted) throw new ModelError(INTERRUPTED);
      throw err instanceof ModelError ? err : new ModelError(connectionFailure(err));
    } finally {
      req.done();
    }
  }

  return {
    preconnect: plain && (() => plain.preconnect()),
    stream: (params, handlers, signal) => consume(open(requestBody(params), signal), handlers, signal),
    hold:
      plain &&
      ((body, hole, signal) => {
        const req = open(body, signal, hole);
        return { stream: (handlers, stepSignal) => consume(req, handlers, stepSignal), cancel: () => (req.cancel(), req.done()) };
      }),
  };
}

type QueueItem = { event: StreamEvent } | { end: true; failure?: ModelFailure };

/** A request under way whose answer is queued for `consume`. */
interface Opened {
  /** Settles once a 200 answer's head is in, or with the request's failure. */
  posted: Promise<void>;
  next(): Promise<QueueItem>;
  cancel(): void;
  /** Stops listening to the signal it was opened with. */
  done(): void;
}

/** Where a 200 answer's body goes. */
interface BodySink {
  data(text: string): void;
  end(): void;
  fail(err: Error): void;
}

/** Sends one request (a body and headers without a length), its answer to `sink`. */
type Transport = (headers: [string, string][], body: string, sink: ResponseSink) => PlainRequest;

/** Plain HTTP: the brain's own client (plain-http.ts). */
function plainTransport(url: URL, timeoutMs: number): Transport & { preconnect(): void } {
  const client = new PlainHttpClient(url, timeoutMs);
  const bodies = new BodyBuffer();
  const send: Transport = (headers, body, sink) => {
    const { bytes, release } = bodies.encode(body);
    return client.post(headers, bytes, sink, release);
  };
  return Object.assign(send, { preconnect: () => client.preconnect() });
}

/** HTTPS: Node's client, with a kept-alive agent. */
function nodeTransport(url: URL, timeoutMs: number): Transport {
  const agent = new https.Agent({ keepAlive: true });
  const bodies = new BodyBuffer();
  return (headers, body, target) => {
    const sink = once(target);
    const { bytes, release } = bodies.encode(body);
    const req = https.request(url, { method: 'POST', agent, headers: { ...Object.fromEntries(headers), 'content-length': bytes.length } });
    // No byte either way for this long (the API sends pings while it thinks): give up.
    req.setTimeout(timeoutMs, () => req.destroy(new Error(`no answer in ${timeoutMs} ms`)));
    req.on('error', (err) => sink.fail(err));
    req.on('response', (res) => {
      const flat: Record<string, string> = {};
      for (const [n, v] of Object.entries(res.headers)) if (v !== undefined) flat[n] = Array.isArray(v) ? v.join(', ') : v;
      sink.head(res.statusCode ?? 0, flat);
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => sink.data(chunk));
      res.on('end', () => sink.end());
      res.on('error', (err) => sink.fail(err));
      res.on('close', () => !res.complete && sink.fail(new Error('the connection closed mid-answer')));
    });
    // Sent (handed to the socket) or abandoned: either way the buffer is free again.
    req.once('finish', release);
    req.once('close', release);
    req.end(bytes);
    return { cancel: () => (sink.cancel(), req.destroy()) };
  };
}

/** A sink that hears one end or failure at most, and nothing once cancelled. */
function once(sink: ResponseSink): ResponseSink & { cancel(): void } {
  let over = false;
  return {
    head: (status, headers) => !over && sink.head(status, headers),
    data: (text) => !over && sink.data(text),
    end: () => {
      if (over) return;
      over = true;
      sink.end();
    },
    fail: (err) => {
      if (over) return;
      over = true;
      sink.fail(err);
    },
    cancel: () => void (over = true),
  };
}

function headerMs(headers: Record<string, string>): number | undefined {
  const ms = headers['retry-after-ms'];
  if (ms && Number.isFinite(Number(ms))) return Number(ms);
  const s = headers['retry-after'];
  if (s && Number.isFinite(Number(s))) return Number(s) * 1000;
  if (s) {
    const at = Date.parse(s);
    if (!Number.isNaN(at)) return Math.max(0, at - Date.now());
  }
  return undefined;
}

/** Maps an HTTP error answer to the Managed Agents error types and a retry decision. */
export function httpFailure(status: number, headers: Record<string, string>, body: string): ModelFailure {
  let type: string | undefined;
  let detail = body.trim().slice(0, 2000) || 'no body';
  try {
    const parsed = JSON.parse(body) as { error?: { type?: string; message?: string } };
    type = parsed.error?.type;
    if (parsed.error?.message !== undefined) detail = `${type ?? 'error'}: ${parsed.error.message}`;
  } catch {
    // Not JSON (a proxy's page): the text is the message.
  }
  const message = `${status} ${detail}`;
  const retryAfterMs = headerMs(headers);
  if (status === 429 || type === 'rate_limit_error') return { errorType: 'model_rate_limited_error', message, retryable: true, retryAfterMs, status };
  if (status === 529 || type === 'overloaded_error') return { errorType: 'model_overloaded_error', message, retryable: true, retryAfterMs, status };
  if (status >= 500 || status === 408 || status === 409) return { errorType: 'model_request_failed_error', message, retryable: true, retryAfterMs, status };
  return { errorType: 'model_request_failed_error', message, retryable: false, status };
}

/** Connection refused, reset, or a stream cut mid-way: worth another try. */
function connectionFailure(err: unknown): ModelFailure {
  const message = err instanceof Error ? `connection to the model failed: ${err.message}` : 'connection to the model failed';
  return { errorType: 'model_request_failed_error', message, retryable: true };
}
