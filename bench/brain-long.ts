/**
 * The long-session case of `npm run bench:brain`: time from a `user.message` committed to the
 * `span.model_request_start` of its answer, for sessions of 1k, 10k and 100k events side by side
 * (BENCH_LONG_SIZES). Warm: the session's brain is lingering from the turn before. Cold: a fresh
 * brain, which reads the whole log first (for information). Logs are seeded straight through
 * SessionLog with turns of realistic events: a user message, then tool round trips (an agent
 * message, a bash call, its result of 0.2–3 kB), then a closing answer.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { forkBrain } from '../main/brain/supervisor';
import { newId } from '../main/db/ids';
import { createHost, type Host } from '../main/host';
import { openDatabase } from '../main/session/db';
import { SessionLog } from '../main/session/store';
import type { EventInput } from '../main/session/types';
import { startModelProcess } from './model-handle';
import { fmt, percentile } from './stats';

const agent = { type: 'agent', id: 'agent_bench', version: 1, name: 'bench', model: { id: 'bench' }, system: 'You are a bench agent.', tools: [{ type: 'agent_toolset_20260401', configs: [], default_config: { enabled: true } }] };

/** Deterministic filler text of about `n` characters. */
function filler(n: number, salt: number): string {
  const words = ['build', 'the', 'module', 'passes', 'tests', 'error', 'line', 'src/index.ts', 'ok', 'warning', 'npm', 'exit', '0', 'function'];
  let s = '';
  for (let i = 0; s.length < n; i++) s += words[(i * 7 + salt) % words.length] + (i % 12 === 11 ? '\n' : ' ');
  return s.slice(0, n);
}

/** Appends whole turns until the session holds at least `target` events; returns its last seq. */
function seed(log: SessionLog, sessionId: string, target: number): number {
  let seq = 0;
  let batch: EventInput[] = [];
  const add = (e: EventInput) => {
    batch.push(e);
    seq += 1;
    if (batch.length === 1000) flush();
  };
  const flush = () => {
    if (batch.length) log.emitEvents(sessionId, batch);
    batch = [];
  };
  const usage = { input_tokens: 1200, output_tokens: 90, cache_read_input_tokens: 1000, cache_creation_input_tokens: 100 };
  for (let turn = 0; seq < target; turn++) {
    add({ type: 'user.message', content: [{ type: 'text', text: filler(80 + (turn % 5) * 60, turn) }] });
    add({ type: 'session.status_running' });
    const trips = 3 + (turn % 6);
    for (let k = 0; k < trips; k++) {
      const start = newId.event();
      add({ type: 'span.model_request_start', id: start, context_seq: seq });
      if (k % 2 === 0) add({ type: 'agent.message', content: [{ type: 'text', text: filler(100 + ((turn + k) % 4) * 100, k) }] });
      const call = newId.event();
      add({ type: 'agent.tool_use', id: call, name: 'bash', input: { command: `cd src && grep -rn "${filler(12, k)}" . | head -${20 + k}` }, model_tool_use_id: `toolu_${call.slice(5)}` });
      add({ type: 'span.model_request_end', model_request_start_id: start, is_error: false, model_usage: usage, stop_reason: 'tool_use' });
      add({ type: 'agent.tool_result', tool_use_id: call, content: [{ type: 'text', text: filler(200 + ((turn * 13 + k * 7) % 12) * 250, turn + k) }], is_error: false, details: { exit_code: 0, duration_ms: 40 + k, hand: 'main' } });
    }
    const start = newId.event();
    add({ type: 'span.model_request_start', id: start, context_seq: seq });
    add({ type: 'agent.message', content: [{ type: 'text', text: filler(300, turn) }] });
    add({ type: 'span.model_request_end', model_request_start_id: start, is_error: false, model_usage: usage, stop_reason: 'end_turn' });
    add({ type: 'session.status_idle', stop_reason: { type: 'end_turn' }, stop_details: null, handled_through: seq });
  }
  flush();
  return seq;
}

/** Times one turn: user.message committed → its span.model_request_start committed (ms); waits for the turn to end. */
function turn(host: Host, sessionId: string, text: string): Promise<number> {
  return new Promise((resolve) => {
    let t0 = 0;
    let t1 = 0;
    let from = Infinity;
    const stop = host.log.subscribe(sessionId, (e) => {
      if (e.type === 'user.message' && t0 === 0) {
        t0 = performance.now();
        from = e.seq;
      } else if (e.type === 'span.model_request_start' && e.seq > from && t1 === 0) t1 = performance.now();
      else if (e.type === 'session.status_idle' && e.seq > from) {
        stop();
        resolve(t1 - t0);
      }
    });
    host.log.emitEvent(sessionId, { type: 'user.message', content: [{ type: 'text', text }] });
  });
}

async function until(cond: () => boolean, what: string, timeoutMs = 120_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Runs the long-session case and prints its table. */
export async function longSessions(entry: string, turnsBeforeDone: number): Promise<void> {
  const sizes = (process.env.BENCH_LONG_SIZES ?? '1000,10000,100000').split(',').map(Number);
  const reps = Number(process.env.BENCH_LONG_REPS ?? 7);
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'corral-bench-long-'));
  const seeding = performance.now();
  const log = new SessionLog(openDatabase({ file: path.join(dataDir, 'corral.sqlite') }));
  const ids = sizes.map((n) => {
    const { session } = log.createSession({ record: { agent } });
    seed(log, session.id, n);
    return session.id;
  });
  const counts = ids.map((id) => log.getSession(id).last_seq);
  log.close();
  console.log(`\nlong sessions: seeded ${counts.map((c) => fmt(c, 0)).join(' / ')} events in ${fmt((performance.now() - seeding) / 1000, 1)} s`);

  const model = await startModelProcess(turnsBeforeDone);
  process.env.ANTHROPIC_BASE_URL = model.url;
  process.env.ANTHROPIC_API_KEY = 'bench';
  const host = createHost({ dataDir, brains: { spawn: (id) => forkBrain(entry, id), maxRestartsPerMinute: 10_000 } });
  const cold = sizes.map(() => [] as number[]);
  const warm = sizes.map(() => [] as number[]);
  const loop = monitorEventLoopDelay({ resolution: 1 });
  try {
    // Cold: no brain lingers, so each message starts a fresh one that reads the whole log.
    process.env.CORRAL_BRAIN_LINGER_MS = '0';
    loop.enable();
    for (let r = 0; r < reps; r++) {
      for (const [i, id] of ids.entries()) {
        await until(() => !host.brains!.active().includes(id), 'the brain to leave');
        cold[i]!.push(await turn(host, id, `cold ${r}`));
      }
    }
    loop.disable();
    const coldLoop = { p99: loop.percentile(99) / 1e6, max: loop.max / 1e6 };
    loop.reset();
    // Warm: one turn to start a brain that lingers, then the measured turns, sizes interleaved.
    process.env.CORRAL_BRAIN_LINGER_MS = String(30 * 60_000);
    for (const id of ids) {
      await until(() => !host.brains!.active().includes(id), 'the brain to leave');
      await turn(host, id, 'warm up');
    }
    loop.enable();
    for (let r = 0; r < reps; r++) for (const [i, id] of ids.entries()) warm[i]!.push(await turn(host, id, `warm ${r}`));
    loop.disable();
    const warmLoop = { p99: loop.percentile(99) / 1e6, max: loop.max / 1e6 };

    const cell = (xs: number[]) => `${fmt(percentile(xs, 50), 1)} / ${fmt(Math.max(...xs), 1)}`.padStart(16);
    console.log(`user.message committed → span.model_request_start (ms, p50 / max of ${reps} turns each, sizes side by side)`);
    console.log('    events      warm p50 / max      cold p50 / max');
    for (const [i, c] of counts.entries()) console.log(`${fmt(c, 0).padStart(10)}  ${cell(warm[i]!)}    ${cell(cold[i]!)}`);
    const ratio = percentile(warm.at(-1)!, 50) / percentile(warm[0]!, 50);
    console.log(`warm ${fmt(counts.at(-1)!, 0)} / warm ${fmt(counts[0]!, 0)}: ${fmt(ratio, 2)}× (target ≤ 2×)`);
    console.log(`host event loop delay p99 / max: warm turns ${fmt(warmLoop.p99, 1)} / ${fmt(warmLoop.max, 1)} ms; cold turns ${fmt(coldLoop.p99, 1)} / ${fmt(coldLoop.max, 1)} ms`);
  } finally {
    await host.close();
    await model.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}
