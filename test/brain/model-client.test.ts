import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createAnthropicCaller, ModelError, type FinishedBlock } from '../../main/brain/model';
import { SseParser } from '../../main/brain/model-stream';
import { startModelServer, type ModelServer } from '../fixtures/model-server';

// The brain's own Messages client, against the scripted model server (the real wire format) and
// against a raw server for what that one does not do.

let model: ModelServer | undefined;
let raw: http.Server | undefined;
afterEach(async () => {
  await model?.close();
  await new Promise((r) => (raw ? raw.close(r) : r(undefined)));
  model = raw = undefined;
});

const params = { model: 'm', max_tokens: 100, messages: [{ role: 'user' as const, content: [{ type: 'text', text: 'hi' }] }] };

async function run(baseURL: string) {
  const blocks: FinishedBlock[] = [];
  const text: string[] = [];
  const caller = createAnthropicCaller({ apiKey: 'k', baseURL });
  try {
    const out = await caller.stream(params, { onBlock: async (b) => void blocks.push(b), onTextDelta: (_, t) => text.push(t) }, new AbortController().signal);
    return { ...out, blocks, text };
  } catch (err) {
    return { failure: (err as ModelError).failure, blocks, text };
  }
}

/** A server that answers every request with these bytes (SSE unless a status is given). */
async function rawServer(write: (res: http.ServerResponse) => void): Promise<string> {
  raw = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => write(res));
  });
  await new Promise<void>((r) => raw!.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(raw!.address() as AddressInfo).port}`;
}
const sse = (...events: object[]) => events.map((e) => `event: ${(e as { type: string }).type}\ndata: ${JSON.stringify(e)}\n\n`).join('');
const start = { type: 'message_start', message: { usage: { input_tokens: 10, output_tokens: 1 } } };

describe('the model client', () => {
  it('streams blocks, live text, stop reason and usage, with the headers the API wants', async () => {
    model = await startModelServer([
      { blocks: [{ type: 'thinking', thinking: 'hmm' }, { type: 'text', text: 'Hello there' }, { type: 'tool_use', name: 'bash', input: { command: 'ls -la' } }], usage: { input_tokens: 12, output_tokens: 7, cache_read_input_tokens: 5 } },
    ]);
    const out = await run(model.url);
    expect(out.blocks.map((b) => b.type)).toEqual(['thinking', 'text', 'tool_use']);
    expect(out.blocks[2]).toMatchObject({ name: 'bash', input: { command: 'ls -la' } });
    expect(out.text.join('')).toBe('hmmHello there');
    expect(out).toMatchObject({ stopReason: 'tool_use', usage: { input_tokens: 12, output_tokens: 7, cache_read_input_tokens: 5 } });
    expect(model.requests[0]!.headers).toMatchObject({ 'x-api-key': 'k', 'anthropic-version': '2023-06-01' });
    expect(model.requests[0]!.body.stream).toBe(true);
  });

  it('an error event mid-stream (overloaded) is a retryable overload, after the blocks before it', async () => {
    const url = await rawServer((res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(
        sse(start, { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }, { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'part' } }, { type: 'content_block_stop', index: 0 }) +
          sse({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }),
      );
    });
    const out = await run(url);
    expect(out.blocks).toEqual([{ type: 'text', text: 'part' }]);
    expect(out.failure).toMatchObject({ errorType: 'model_overloaded_error', retryable: true });
  });

  it('an answer that ends without message_stop is a failed request, not a short answer', async () => {
    const url = await rawServer((res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(sse(start, { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }));
    });
    expect((await run(url)).failure).toMatchObject({ errorType: 'model_request_failed_error', retryable: true, message: expect.stringMatching(/message_stop/) });
  });

  it('HTTP errors: the API type and message, retry-after in seconds, a body that is not JSON', async () => {
    let answer = 0;
    const url = await rawServer((res) => {
      if (answer++ === 0) {
        res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '7' });
        res.end(JSON.stringify({ type: 'error', error: { type: 'rate_limit_error', message: 'slow down' } }));
      } else {
        res.writeHead(502, { 'content-type': 'text/html' });
        res.end('<html>bad gateway</html>');
      }
    });
    expect((await run(url)).failure).toEqual({ errorType: 'model_rate_limited_error', message: '429 rate_limit_error: slow down', retryable: true, retryAfterMs: 7000, status: 429 });
    expect((await run(url)).failure).toMatchObject({ errorType: 'model_request_failed_error', retryable: true, status: 502, message: '502 <html>bad gateway</html>' });
  });

  it('nobody listening: a retryable connection failure', async () => {
    const url = await rawServer(() => {});
    await new Promise((r) => raw!.close(r));
    raw = undefined;
    expect((await run(url)).failure).toMatchObject({ errorType: 'model_request_failed_error', retryable: true, message: expect.stringMatching(/^connection to the model failed/) });
  });

  it('an abort ends the stream at once as interrupted', async () => {
    model = await startModelServer([{ blocks: [{ type: 'text', text: 'slow' }], firstTokenDelayMs: 10_000 }]);
    const caller = createAnthropicCaller({ apiKey: 'k', baseURL: model.url });
    const ctrl = new AbortController();
    const pending = caller.stream(params, { onBlock: async () => {} }, ctrl.signal).catch((e: ModelError) => e.failure);
    while (model.requests.length === 0) await new Promise((r) => setTimeout(r, 5));
    ctrl.abort();
    expect(await pending).toMatchObject({ aborted: true, retryable: false });
  });
});

describe('SseParser', () => {
  it('splits frames across chunk boundaries, with LF or CRLF line ends, joining data lines', () => {
    const got: string[] = [];
    const p = new SseParser((d) => got.push(d));
    const text = 'event: a\ndata: {"x":1}\n\n: a comment\n\nevent: b\r\ndata: {"y":\r\ndata: 2}\r\n\r\ndata:{"z":3}\n\n';
    for (const ch of text) p.feed(ch);
    expect(got).toEqual(['{"x":1}', '{"y":\n2}', '{"z":3}']);
  });
});
