/**
 * `npm run bench:log`: figures for the session log. Prints single-event durable appends/s,
 * batched appends/s (and their ratio, measured in this run), p50/p99 of a 100-event slice
 * from the middle of a 1,000,000-event session, and the delay from commit to a subscriber
 * (in-process listener, SSE client over HTTP, UI WebSocket client).
 * Targets (issue 2): appends ≥ 20,000/s; slice p99 ≤ 2 ms; subscriber delay p99 ≤ 20 ms.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import WebSocket from 'ws';
import { startServer } from '../main/api/http/server';
import { uiSessionHeaders } from '../test/helpers/ui-session';
import { createHost } from '../main/host';
import { fmt, percentile } from './stats';

const TOTAL = Number(process.env.BENCH_LOG_EVENTS ?? 1_000_000);
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'corral-bench-'));
const host = createHost({ dataDir: dir });
const { log } = host;
const event = (i: number) => ({ type: 'user.message', content: [{ type: 'text', text: `event number ${i} with a little text` }] });
const line = (label: string, value: string) => console.log(`${label.padEnd(52)} ${value}`);

function singleAppends(n: number): number {
  const { session } = log.createSession();
  const t0 = performance.now();
  for (let i = 0; i < n; i++) log.emitEvent(session.id, event(i));
  return n / ((performance.now() - t0) / 1000);
}

function batchedAppends(n: number, batch: number): number {
  const { session } = log.createSession();
  const t0 = performance.now();
  for (let i = 0; i < n; i += batch) log.emitEvents(session.id, Array.from({ length: batch }, (_, j) => event(i + j)));
  return n / ((performance.now() - t0) / 1000);
}

async function main() {
  console.log(`corral bench:log — ${os.cpus().length} cores, node ${process.version}, data in ${dir}`);
  console.log('synchronous=NORMAL in WAL mode: every append is committed (survives kill -9) when the call returns.\n');

  singleAppends(2000); // warm up
  const single = singleAppends(30_000);
  const batched = batchedAppends(200_000, 100);
  line('single-event durable appends', `${fmt(single, 0)} events/s   (target ≥ 20,000)`);
  line('batched appends (100 events per transaction)', `${fmt(batched, 0)} events/s`);
  line('batched / single (same run)', `${fmt(batched / single, 2)}×`);

  // A 1,000,000-event session, then 100-event slices from its middle.
  const { session: big } = log.createSession();
  const t0 = performance.now();
  for (let i = 0; i < TOTAL; i += 1000) log.emitEvents(big.id, Array.from({ length: Math.min(1000, TOTAL - i) }, (_, j) => event(i + j)));
  line(`filled a ${fmt(TOTAL, 0)}-event session`, `${fmt((performance.now() - t0) / 1000, 1)} s`);
  const mid = Math.floor(TOTAL / 2);
  for (const [label, slice] of [
    ['slice: 100 events after a middle position', (p: number) => ({ after: p, limit: 100 })],
    ['slice: the 100 events before a middle position', (p: number) => ({ before: p, limit: 100 })],
    ['slice: 100 user.message events after the middle', (p: number) => ({ after: p, limit: 100, types: ['user.message'] })],
  ] as const) {
    const times: number[] = [];
    for (let i = 0; i < 3000; i++) {
      const pos = mid - 5000 + Math.floor(Math.random() * 10_000);
      const s = performance.now();
      const got = log.getEvents(big.id, slice(pos));
      times.push(performance.now() - s);
      if (got.length !== 100) throw new Error(`slice returned ${got.length} events`);
    }
    line(label, `p50 ${fmt(percentile(times, 50))} ms   p99 ${fmt(percentile(times, 99))} ms   (target p99 ≤ 2)`);
  }

  // Commit → subscriber.
  const { session: live } = log.createSession();
  const sent = new Map<number, number>();
  // In-process listeners run synchronously right after the commit, inside emitEvent: measure
  // from the start of the call (an upper bound that includes the commit itself).
  const inProcess: number[] = [];
  let callStart = 0;
  const stop = log.subscribe(live.id, () => inProcess.push(performance.now() - callStart));
  const server = await startServer(host, { port: 0, apiKey: 'bench', rendererDir: dir });
  const sse: number[] = [];
  const ws: number[] = [];
  const sseDone = readSse(server.url, live.id, (seq) => sse.push(performance.now() - sent.get(seq)!));
  const wsDone = readWs(server.url, await uiSessionHeaders(server.url, 'bench'), live.id, (seq) => ws.push(performance.now() - sent.get(seq)!));
  await new Promise((r) => setTimeout(r, 300));
  const N = 2000;
  for (let i = 0; i < N; i++) {
    // `sent` is stamped at commit: emitEvent returns right after the transaction commits.
    callStart = performance.now();
    const e = log.emitEvent(live.id, event(i));
    sent.set(e.seq, performance.now());
    if (i % 10 === 0) await new Promise((r) => setTimeout(r, 1));
  }
  await Promise.race([Promise.all([sseDone.until(N), wsDone.until(N)]), new Promise((r) => setTimeout(r, 10_000))]);
  stop();
  line('append call → in-process subscriber (incl. commit)', `p50 ${fmt(percentile(inProcess, 50))} ms   p99 ${fmt(percentile(inProcess, 99))} ms`);
  line('commit → SSE client (HTTP, loopback)', `p50 ${fmt(percentile(sse, 50))} ms   p99 ${fmt(percentile(sse, 99))} ms   (target p99 ≤ 20)   [${sse.length}/${N}]`);
  line('commit → UI WebSocket client (loopback)', `p50 ${fmt(percentile(ws, 50))} ms   p99 ${fmt(percentile(ws, 99))} ms   [${ws.length}/${N}]`);
  sseDone.stop();
  wsDone.stop();
  await server.close();
  await host.close();
  fs.rmSync(dir, { recursive: true, force: true });
}

function readSse(base: string, sessionId: string, onSeq: (seq: number) => void) {
  const ctrl = new AbortController();
  let count = 0;
  let waiter: { n: number; resolve: () => void } | undefined;
  (async () => {
    const res = await fetch(`${base}/v1/sessions/${sessionId}/events/stream`, { headers: { 'x-api-key': 'bench' }, signal: ctrl.signal });
    const decoder = new TextDecoder();
    let buf = '';
    for await (const chunk of res.body!) {
      buf += decoder.decode(chunk as Uint8Array, { stream: true });
      let i: number;
      while ((i = buf.indexOf('\n\n')) >= 0) {
        const frame = buf.slice(0, i);
        buf = buf.slice(i + 2);
        const data = frame.split('\n').find((l) => l.startsWith('data: '));
        if (!data || frame.includes('event: ping')) continue;
        onSeq((JSON.parse(data.slice(6)) as { seq: number }).seq);
        count++;
        if (waiter && count >= waiter.n) waiter.resolve();
      }
    }
  })().catch(() => {});
  return {
    until: (n: number) => new Promise<void>((resolve) => (count >= n ? resolve() : (waiter = { n, resolve }))),
    stop: () => ctrl.abort(),
  };
}

function readWs(base: string, headers: Record<string, string>, sessionId: string, onSeq: (seq: number) => void) {
  const socket = new WebSocket(`${base.replace('http', 'ws')}/ui/ws`, { headers });
  let count = 0;
  let waiter: { n: number; resolve: () => void } | undefined;
  socket.on('open', () => socket.send(JSON.stringify({ t: 'watch', id: 1, stream: 'watchEvents', input: { sessionId } })));
  socket.on('message', (data) => {
    const msg = JSON.parse(String(data)) as { t: string; item?: { seq: number } };
    if (msg.t !== 'item' || !msg.item) return;
    onSeq(msg.item.seq);
    count++;
    if (waiter && count >= waiter.n) waiter.resolve();
  });
  return {
    until: (n: number) => new Promise<void>((resolve) => (count >= n ? resolve() : (waiter = { n, resolve }))),
    stop: () => socket.close(),
  };
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
