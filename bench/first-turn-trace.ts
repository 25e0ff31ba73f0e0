/**
 * `npx tsx bench/first-turn-trace.ts`: where a new session's first model request spends its time,
 * hop by hop, seen from the host (pooled and primed brains, as the supervisor binds them):
 * user.message committed → brain bound (bind sent) → the brain's first message arrives → its
 * span.model_request_start append arrives → the span is logged → the model server gets the
 * request. Each session also says whether a pooled brain was being forked (a refill) during it
 * and the host's event-loop delay, so a slow one can be told apart. Profiling, not a target.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { BrainPool } from '../main/brain/brain-pool';
import { brainPrime } from '../main/brain/brain-prime';
import type { BrainChild } from '../main/brain/supervisor';
import { createHost } from '../main/host';
import { brainEntry, ensureBuilt } from './build';
import { startModelProcess } from './model-handle';
import { fmt, percentile } from './stats';

const SESSIONS = Number(process.env.BENCH_SESSIONS ?? 10);
const GAP_MS = Number(process.env.BENCH_GAP_MS ?? 300);
const now = () => performance.timeOrigin + performance.now();

interface Trace {
  asked: number;
  bound?: number;
  firstMsg?: number;
  spanReq?: number;
  spanLogged?: number;
  modelGot?: number;
  forkDuring: boolean;
}

/** Traces SESSIONS new sessions' first turns; `poolOpts` are extra BrainPool options. */
export async function traceFirstTurns(_label: string, poolOpts: Partial<ConstructorParameters<typeof BrainPool>[0]> = {}, sessions = SESSIONS) {
  const model = await startModelProcess(0);
  process.env.ANTHROPIC_BASE_URL = model.url;
  process.env.ANTHROPIC_API_KEY = 'bench';
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'corral-bench-trace-'));
  const forks: number[] = [];
  let host!: ReturnType<typeof createHost>;
  const pool = new BrainPool({ entry: brainEntry, size: Number(process.env.CORRAL_BRAIN_POOL ?? 2), ...poolOpts, onFork: () => forks.push(now()) });
  const traces = new Map<string, Trace>();
  const spawn = (id: string): BrainChild => {
    const child = pool.spawn(id, () => brainPrime(host.log, host.hands, id));
    const t = traces.get(id);
    if (t) t.bound = now();
    return {
      ...child,
      send: (m) => child.send(m),
      kill: () => child.kill(),
      get pid() {
        return child.pid;
      },
      onMessage: (l) =>
        child.onMessage((m) => {
          const tr = traces.get(id);
          if (tr) {
            tr.firstMsg ??= now();
            if (tr.spanReq === undefined && JSON.stringify(m).includes('span.model_request_start')) tr.spanReq = now();
          }
          l(m);
        }),
    };
  };
  host = createHost({ dataDir, brains: { spawn } });
  await host.started;
  pool.fill();
  const loop = monitorEventLoopDelay({ resolution: 1 });
  const stop = host.log.subscribeAll(({ sessionId, event }) => {
    const tr = traces.get(sessionId);
    if (tr && event.type === 'span.model_request_start') tr.spanLogged ??= now();
  });
  const idle = new Map<string, number>();
  const stopIdle = host.log.subscribeAll(({ sessionId, event }) => {
    if (event.type === 'session.status_idle') idle.set(sessionId, (idle.get(sessionId) ?? 0) + 1);
  });
  const agent = { type: 'agent', id: 'agent_bench', version: 1, name: 'bench', model: { id: 'bench' }, system: null, tools: [] };
  await new Promise((r) => setTimeout(r, 2000));
  loop.enable();
  const ids: string[] = [];
  for (let i = 0; i < sessions; i++) {
    const { session } = host.log.createSession({ record: { agent } });
    ids.push(session.id);
    traces.set(session.id, { asked: now(), forkDuring: false });
    host.log.emitEvent(session.id, { type: 'user.message', content: [{ type: 'text', text: `bench ${session.id}` }] });
    const deadline = Date.now() + 60_000;
    while (!idle.get(session.id)) {
      if (Date.now() > deadline) throw new Error('a session did not go idle in a minute');
      await new Promise((r) => setTimeout(r, 2));
    }
    await new Promise((r) => setTimeout(r, GAP_MS));
  }
  loop.disable();
  const timings = await model.timings();
  for (const t of timings) {
    const tr = traces.get(t.session);
    if (tr && t.arrived !== undefined) tr.modelGot ??= t.arrived;
  }
  for (const tr of traces.values()) {
    // A refill fork started from 200 ms before the message to the span: its start-up shared the CPU.
    tr.forkDuring = forks.some((f) => f > tr.asked - 200 && f < (tr.spanLogged ?? Infinity));
  }
  stop();
  stopIdle();
  await host.close();
  pool.stop();
  await model.stop();
  fs.rmSync(dataDir, { recursive: true, force: true });
  return { list: ids.map((id) => traces.get(id)!), loopP99: loop.percentile(99) / 1e6, loopMax: loop.max / 1e6 };
}

/** Prints the hops of a mode's sessions (all its rounds together); returns p50/p95 of the target. */
export function printTraces(label: string, list: Trace[], loopP99: number) {
  const hop = (a: keyof Trace, b: keyof Trace) => list.map((t) => (t[b] as number) - (t[a] as number)).filter(Number.isFinite);
  const total = hop('asked', 'spanLogged');
  const row = (name: string, v: number[]) => console.log(`  ${name.padEnd(40)} p50 ${fmt(percentile(v, 50), 1).padStart(6)}  p95 ${fmt(percentile(v, 95), 1).padStart(6)}  max ${fmt(Math.max(...v), 1).padStart(6)} ms`);
  console.log(`\n${label}: ${list.length} sessions; host loop delay p99 (worst round) ${fmt(loopP99, 1)} ms`);
  row('user.message → brain bound (bind sent)', hop('asked', 'bound'));
  row("bind sent → brain's first message", hop('bound', 'firstMsg'));
  row('first message → span append arrives', hop('firstMsg', 'spanReq'));
  row('span append arrives → span logged', hop('spanReq', 'spanLogged'));
  row('user.message → span logged (the target)', total);
  row('span logged → model server has it', hop('spanLogged', 'modelGot'));
  const withFork = list.filter((t) => t.forkDuring).map((t) => t.spanLogged! - t.asked);
  const without = list.filter((t) => !t.forkDuring).map((t) => t.spanLogged! - t.asked);
  console.log(`  with a refill fork during it: n=${withFork.length} p50 ${fmt(percentile(withFork, 50), 1)} max ${fmt(Math.max(...withFork, 0), 1)} ms; without: n=${without.length} p50 ${fmt(percentile(without, 50), 1)} max ${fmt(Math.max(...without, 0), 1)} ms`);
  const slow = [...list].sort((a, b) => b.spanLogged! - b.asked - (a.spanLogged! - a.asked)).slice(0, 3);
  for (const t of slow)
    console.log(`  slow: total ${fmt(t.spanLogged! - t.asked, 1)} = bind ${fmt(t.bound! - t.asked, 1)} + first msg ${fmt(t.firstMsg! - t.bound!, 1)} + span req ${fmt(t.spanReq! - t.firstMsg!, 1)} + log ${fmt(t.spanLogged! - t.spanReq!, 1)}${t.forkDuring ? ' (refill fork during it)' : ''}`);
  return { p50: percentile(total, 50), p95: percentile(total, 95), n: total.length };
}

/** The pool as it was (a fixed 1 s refill delay, no pause, no warm-up) and as it is, and the parts. */
export const TRACE_MODES: Record<string, Partial<ConstructorParameters<typeof BrainPool>[0]>> = {
  before: { refillAfter: 1000, pauseStarting: false, warmUp: false, lowerAfterFirstRequest: false },
  'after, brains at niceness 5 throughout': { lowerAfterFirstRequest: false },
  'after, the warm-up with its model in memory': { warmUp: 'in-memory' },
  after: {},
};

/** Rounds of every mode in turn (ROUNDS × SESSIONS each), so they share the machine's load. */
export async function compareFirstTurns(rounds = Number(process.env.BENCH_ROUNDS ?? 3), modes = Object.keys(TRACE_MODES)) {
  const load = [os.loadavg()];
  const got = new Map<string, { list: Trace[]; loopP99: number }>();
  for (let r = 0; r < rounds; r++) {
    for (const mode of modes) {
      const res = await traceFirstTurns(mode, TRACE_MODES[mode]);
      const into = got.get(mode) ?? got.set(mode, { list: [], loopP99: 0 }).get(mode)!;
      into.list.push(...res.list);
      into.loopP99 = Math.max(into.loopP99, res.loopP99);
    }
  }
  load.push(os.loadavg());
  console.log(`\nnew session: user.message → span.model_request_start, pooled and primed brains (CORRAL_BRAIN_POOL ${process.env.CORRAL_BRAIN_POOL ?? 2}), ${rounds} rounds of ${SESSIONS} sessions per mode, interleaved, ${GAP_MS} ms apart; ${os.cpus().length} cores`);
  console.log(`load average at start ${load[0]!.map((l) => fmt(l, 2)).join(', ')}, at end ${load[1]!.map((l) => fmt(l, 2)).join(', ')}`);
  const out: Record<string, unknown> = {};
  for (const mode of modes) out[mode] = printTraces(mode, got.get(mode)!.list, got.get(mode)!.loopP99);
  console.log(JSON.stringify({ loadavg: load, ...out }));
  return out;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  ensureBuilt();
  compareFirstTurns().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
