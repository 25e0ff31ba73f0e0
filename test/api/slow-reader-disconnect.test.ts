import http from 'node:http';
import type net from 'node:net';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { uiSessionHeaders } from '../helpers/ui-session';
import { CLOSE_TOO_SLOW } from '../../main/api/http/ws-flow';
import { startTestServer, type TestServer } from '../helpers/server';

/** A client that reads nothing for this long is disconnected (the default is 30 s). */
const STALL_MS = 300;
/**
 * How long the test's client reads nothing. Long enough for the server to fill the connection's
 * buffers and then wait STALL_MS on a loaded machine: at 1.5 s a loaded CI run wrote 11.5 MB
 * slowly enough that it never waited 300 ms, was never cut, and the test waited for ever.
 */
const PAUSE_MS = STALL_MS * 15;
/** Three small events, then three near the 4 MiB cap: more than a connection's kernel buffers take. */
const SMALL = 3;
const EVENTS = 6;
const TEXT_CHARS = 4 * 1024 * 1024 - 4096;

let t: TestServer;
let sessionId: string;
beforeAll(async () => {
  t = await startTestServer({ stallMs: STALL_MS });
  const { session } = t.host.log.createSession({ record: {} });
  sessionId = session.id;
  for (let i = 0; i < EVENTS; i++) {
    t.host.log.emitEvent(sessionId, { type: 'user.message', content: [{ type: 'text', text: String(i).repeat(i < SMALL ? 100 : TEXT_CHARS) }] });
  }
});
afterAll(() => t.close());

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Complete `user.message` frames in an SSE text: their ids and positions. */
function completeFrames(text: string): { id: string; seq: number }[] {
  return text
    .split('\n\n')
    .slice(0, -1) // the last part is unfinished (or empty)
    .filter((f) => f.startsWith('event: user.message'))
    .map((f) => ({ id: /\nid: (\S+)/.exec(f)![1]!, seq: (JSON.parse(/\ndata: (.*)/.exec(f)![1]!) as { seq: number }).seq }));
}

/** Opens the SSE stream and reads nothing for `resumeAfterMs`; then reads on until it ends or `enough` says so. */
async function sseRead(headers: Record<string, string>, query: string, resumeAfterMs: number, enough?: (text: string) => boolean): Promise<string> {
  const res = await new Promise<http.IncomingMessage>((resolve, reject) => {
    http
      .get({ host: '127.0.0.1', port: t.server.port, path: `/v1/sessions/${sessionId}/events/stream${query}`, headers: { 'x-api-key': t.apiKey, ...headers } }, resolve)
      .on('error', reject);
  });
  res.pause();
  await sleep(resumeAfterMs);
  let text = '';
  res.setEncoding('utf8');
  return new Promise((resolve, reject) => {
    // Server and client share this process: 12 MB through it takes about 10 s here, twice that on a loaded CI machine.
    const timer = setTimeout(() => reject(new Error(`the stream neither ended nor finished; got ${text.length} chars`)), 60_000);
    const finish = () => {
      clearTimeout(timer);
      resolve(text);
    };
    res.on('data', (d: string) => {
      text += d;
      if (enough?.(text)) {
        res.destroy();
        finish();
      }
    });
    res.on('close', finish);
    res.on('error', () => {});
    res.resume();
  });
}

describe('a client that stops reading', () => {
  it('is disconnected from the SSE stream, and resumes with Last-Event-ID losing nothing', async () => {
    const cut = await sseRead({}, '?after_seq=0', PAUSE_MS);
    const first = completeFrames(cut);
    // The server gave up on it part way, after the small events at least.
    expect(first.length).toBeGreaterThanOrEqual(SMALL);
    expect(first.length).toBeLessThan(EVENTS);
    // (Frames are counted only when the text ends with one: the log's last frame ends a write.)
    const resumed = await sseRead({ 'last-event-id': first[first.length - 1]!.id }, '', 0, (text) => text.endsWith('\n\n') && completeFrames(text).length + first.length >= EVENTS);
    const all = [...first, ...completeFrames(resumed)];
    expect(all.map((e) => e.seq)).toEqual(Array.from({ length: EVENTS }, (_, i) => i + 1));
  }, 150_000);

  it('is disconnected from the UI socket, and watches again after the last event it got', async () => {
    const headers = await uiSessionHeaders(t.server.url, t.apiKey);
    const connect = () => new WebSocket(`${t.server.url.replace('http', 'ws')}/ui/ws`, { headers });
    const ws = connect();
    const seqs: number[] = [];
    ws.on('message', (d) => {
      const msg = JSON.parse(String(d)) as { t: string; item?: { seq: number } };
      if (msg.t === 'item') seqs.push(msg.item!.seq);
    });
    const closed = new Promise<number>((resolve) => ws.on('close', (code) => resolve(code)));
    await new Promise((resolve) => ws.once('open', resolve));
    ws.send(JSON.stringify({ t: 'watch', id: 1, stream: 'watchEvents', input: { sessionId } }));
    const raw = (ws as unknown as { _socket: net.Socket })._socket;
    raw.pause();
    await sleep(PAUSE_MS);
    raw.resume();
    const code = await closed;
    // The close frame arrives when the client reads it before the server drops the socket.
    expect([CLOSE_TOO_SLOW, 1006]).toContain(code);
    expect(seqs.length).toBeLessThan(EVENTS);

    const again = connect();
    const rest: number[] = [];
    const done = new Promise<void>((resolve) =>
      again.on('message', (d) => {
        const msg = JSON.parse(String(d)) as { t: string; item?: { seq: number } };
        if (msg.t === 'item') rest.push(msg.item!.seq);
        if (seqs.length + rest.length >= EVENTS) resolve();
      }),
    );
    await new Promise((resolve) => again.once('open', resolve));
    again.send(JSON.stringify({ t: 'watch', id: 1, stream: 'watchEvents', input: { sessionId, after: seqs[seqs.length - 1] ?? 0 } }));
    await done;
    again.close();
    expect([...seqs, ...rest]).toEqual(Array.from({ length: EVENTS }, (_, i) => i + 1));
  }, 30_000);
});
