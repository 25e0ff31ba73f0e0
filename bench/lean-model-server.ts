/**
 * The bench's model server when only the host is measured (BENCH_MODEL=lean, the default): it
 * answers a Messages request with the same streamed reply as the test fixture
 * (test/fixtures/model-server.ts) — a `read` call until `turns` results are in, then a text —
 * but does as little as it can, since on a 2-core machine its CPU is taken from the host and
 * the brain it shares the cores with: no JSON parse of the request (a count of its tool results
 * and the session's id are read off the text), no copy of it kept, the whole reply in one write.
 * A real model's reply arrives paced by the model; its last frames come together, which is
 * where the measured overhead starts.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';

/** One request's arrival and the end of its answer (performance.now()), and whose it was. */
export interface LeanTiming {
  session: string;
  arrivedHr: number;
  finishedHr?: number;
}

const sse = (event: string, data: unknown) => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
const id = (prefix: string) => prefix + randomBytes(12).toString('hex');
const TOOL_RESULT = /"type":"tool_result"/g;
const MODEL_MS = Number(process.env.BENCH_MODEL_MS ?? 0);

/** The SSE body of a reply with one block, as the Messages API streams it. */
function replyBody(model: string, block: { type: 'tool_use'; input: object } | { type: 'text'; text: string }): string {
  const message = { id: id('msg_'), type: 'message', role: 'assistant', model, content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 100, output_tokens: 1, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 } };
  const frames = [sse('message_start', { type: 'message_start', message }), sse('ping', { type: 'ping' })];
  if (block.type === 'tool_use') {
    frames.push(sse('content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id: id('toolu_'), name: 'read', input: {} } }));
    frames.push(sse('content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: JSON.stringify(block.input) } }));
  } else {
    frames.push(sse('content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }));
    frames.push(sse('content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: block.text } }));
  }
  frames.push(sse('content_block_stop', { type: 'content_block_stop', index: 0 }));
  frames.push(sse('message_delta', { type: 'message_delta', delta: { stop_reason: block.type === 'tool_use' ? 'tool_use' : 'end_turn', stop_sequence: null }, usage: { output_tokens: 12 } }));
  frames.push(sse('message_stop', { type: 'message_stop' }));
  return frames.join('');
}

/** Starts the server on loopback; `timings` grows by one entry per request. */
export async function startLeanModelServer(turns: number): Promise<{ url: string; timings: LeanTiming[]; close(): Promise<void> }> {
  const timings: LeanTiming[] = [];
  const server = http.createServer((req, res) => {
    const rec: LeanTiming = { session: '?', arrivedHr: performance.now() };
    timings.push(rec);
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      if (req.method !== 'POST' || req.url?.split('?')[0] !== '/v1/messages') {
        res.writeHead(404, { 'content-type': 'application/json' });
        return res.end(JSON.stringify({ type: 'error', error: { type: 'not_found_error', message: `Not found: ${req.method} ${req.url}` } }));
      }
      rec.session = /bench (sesn_[0-9A-Z]+)/.exec(text)?.[1] ?? '?';
      const model = /"model":"([^"]*)"/.exec(text)?.[1] ?? 'bench';
      const results = text.match(TOOL_RESULT)?.length ?? 0;
      const body = replyBody(model, results < turns ? { type: 'tool_use', input: { file_path: 'note.txt' } } : { type: 'text', text: 'done' });
      const answer = () => {
        res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', 'request-id': id('req_'), 'content-length': Buffer.byteLength(body) });
        res.end(body);
        // The reply's last byte is with the kernel (a body this small is written at once): the
        // stream's end, as the fixture stamps it after writing message_stop.
        rec.finishedHr = performance.now();
      };
      // BENCH_MODEL_MS: the model thinks this long before answering (a real model's first token
      // takes hundreds of milliseconds); the overhead is measured from the answer's end either way.
      if (MODEL_MS > 0) setTimeout(answer, MODEL_MS);
      else answer();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    timings,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
