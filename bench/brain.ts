/**
 * `npm run bench:brain`: the host's overhead per turn with a model server that answers at once
 * (BENCH_MODEL_MS: after that many milliseconds, as a real model's first token would).
 * For N sessions running together (each one user message, then TURNS tool round trips), prints
 * p50/p99 of (model stream end → tool dispatch) and (tool result → next model request), in steady
 * state and during start-up separately, and the largest N whose steady p99 stays within twice the
 * single-session p99. Target (issue 3): ≥ 50. Then the long-session case (brain-long.ts).
 * Brains run from the built entry (out/main/brain-entry.js), as in the app; it is built first
 * if missing or stale. The model server is bench/lean-model-server.ts (BENCH_MODEL=fixture: the
 * tests' server); BENCH_HOST_PROFILE=DIR profiles the host over the single-session steady trips;
 * BENCH_UI_WATCH=1 watches each single session from a window's WebSocket (bench/ui-watcher.ts).
 */
import { fork, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import inspector from 'node:inspector';
import os from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay, performance, PerformanceObserver } from 'node:perf_hooks';
import { analyse, hasWork } from '../main/brain/analyse';
import { forkBrain } from '../main/brain/supervisor';
import { createHost } from '../main/host';
import { startServer } from '../main/api/http/server';
import { uiSessionHeaders } from '../test/helpers/ui-session';
import { longSessions } from './brain-long';
import { printFirstTurns } from './first-turn';
import { brainEntry, ensureBuilt } from './build';
import { startModelProcess, type ModelTiming } from './model-handle';
import { fmt, percentile } from './stats';
import { printIdleFloor } from './idle-floor';
import { wakeRoundTrips } from './wake-floor';

const entry = brainEntry;
const TURNS = Number(process.env.BENCH_TURNS ?? 30);
/** Round trips per session counted as its start-up (BENCH_WARM_TRIPS). */
const WARM = Number(process.env.BENCH_WARM_TRIPS ?? 4);
/** Single-session runs merged into the baseline (BENCH_BASELINE_RUNS). */
const BASELINE_RUNS = Number(process.env.BENCH_BASELINE_RUNS ?? 6);
let TOOL_MS = 0;
/** Epoch milliseconds with sub-millisecond precision, comparable across processes. */
const now = () => performance.timeOrigin + performance.now();
/** CPU milliseconds per steady round trip of each single-session run (Linux: the brain's from /proc). */
const cpuPerTrip: { host: number; brain: number; model: number }[] = [];
/** Pauses (ms) of the host's garbage collections during the single-session runs' steady round trips. */
const gcPauses: number[] = [];
/** Steady round trips those pauses were counted over. */
let gcTrips = 0;
/** A process's time on a CPU in ms, all its threads, from the scheduler's own count in ns (NaN where /proc has none). */
function procCpuMs(pid: number | undefined): number {
  try {
    const tasks = fs.readdirSync(`/proc/${pid}/task`);
    return tasks.reduce((t, task) => t + Number(fs.readFileSync(`/proc/${pid}/task/${task}/schedstat`, 'utf8').split(' ')[0]), 0) / 1e6;
  } catch {
    return NaN;
  }
}
/** This process's (the host's: libuv's pool and V8's helpers included). */
const selfCpuMs = () => procCpuMs(process.pid);

/**
 * BENCH_HOST_PROFILE=DIR: a CPU profile of the host's main thread over each single-session run's
 * steady round trips (50 µs samples), written to DIR as a .cpuprofile.
 */
function profileHost(dir: string): { stop(): void } {
  const session = new inspector.Session();
  session.connect();
  session.post('Profiler.enable');
  session.post('Profiler.setSamplingInterval', { interval: 50 });
  session.post('Profiler.start');
  let stopped = false;
  return {
    stop() {
      if (stopped) return;
      stopped = true;
      session.post('Profiler.stop', (err, res) => {
        if (!err) fs.writeFileSync(path.join(dir, `host-${Date.now()}.cpuprofile`), JSON.stringify(res.profile));
        session.disconnect();
      });
    },
  };
}

/** Windows watching sessions over the UI WebSocket, each a process of its own (bench/ui-watcher.ts). */
async function uiWatchers(host: Awaited<ReturnType<typeof createHost>>, dataDir: string) {
  const server = await startServer(host, { port: 0, apiKey: 'bench', rendererDir: dataDir });
  const { cookie, origin } = await uiSessionHeaders(server.url, 'bench');
  const children: ChildProcess[] = [];
  return {
    async watch(sessionId: string) {
      const child = fork(path.join(import.meta.dirname, 'ui-watcher.ts'), [server.url, cookie, origin, sessionId], { execArgv: ['--import', 'tsx'] });
      children.push(child);
      await new Promise((resolve) => child.once('message', resolve));
    },
    /** Stops them; how many events they saw in all. */
    async stop(): Promise<number> {
      let seen = 0;
      for (const child of children) {
        seen += await new Promise<number>((resolve) => {
          child.once('message', (m: { items: number }) => resolve(m.items));
          child.send({ t: 'count' });
        });
        child.kill();
      }
      await server.close();
      return seen;
    },
  };
}

async function level(n: number) {
  const model = await startModelProcess(TURNS);
  process.env.ANTHROPIC_BASE_URL = model.url;
  process.env.ANTHROPIC_API_KEY = 'bench';
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'corral-bench-brain-'));
  // BENCH_BRAIN_ARGV: node flags for the brains (e.g. `--cpu-prof --cpu-prof-dir=D` to profile one).
  const brainArgv = process.env.BENCH_BRAIN_ARGV?.split(' ').filter(Boolean) ?? [];
  const host = createHost({ dataDir, brains: { spawn: (id) => forkBrain(entry, id, brainArgv), maxRestartsPerMinute: 10_000 } });
  const calls = new Map<string, { dispatched: number; done: number }[]>();
  const execute = host.hands.execute.bind(host.hands);
  host.hands.execute = async (id, hand, name, input, opts) => {
    const rec = { dispatched: now(), done: 0 };
    const out = await execute(id, hand, name, input, opts);
    // A remote hand's command takes time without costing this machine anything; real
    // commands vary, so sessions do not stay in lock-step (0.5× to 1.5× TOOL_MS).
    if (TOOL_MS > 0) await new Promise((r) => setTimeout(r, TOOL_MS * (0.5 + Math.random())));
    rec.done = now();
    (calls.get(id) ?? calls.set(id, []).get(id)!).push(rec);
    return out;
  };
  const agent = { type: 'agent', id: 'agent_bench', version: 1, name: 'bench', model: { id: 'bench' }, system: null, tools: [{ type: 'agent_toolset_20260401', configs: [], default_config: { enabled: true } }] };
  const ids: string[] = [];
  let idle = 0;
  // CPU per round trip (one session): host and brain, from the WARM-th request to the end.
  type CpuAt = { host: number; brain: number; model: number };
  const cpu = { trips: 0, at: undefined as CpuAt | undefined, end: undefined as CpuAt | undefined };
  let hostProfile: { stop(): void } | undefined;
  const cpuNow = (id: string): CpuAt => ({ host: selfCpuMs(), brain: procCpuMs(host.brains?.pidOf(id)), model: procCpuMs(model.pid) });
  const stopCounting = host.log.subscribeAll(({ sessionId, event }) => {
    if (event.type === 'session.status_idle') {
      idle++;
      if (n === 1) cpu.end = cpuNow(sessionId);
      if (n === 1) hostProfile?.stop();
    }
    if (n === 1 && event.type === 'span.model_request_start' && ++cpu.trips === WARM) {
      cpu.at = cpuNow(sessionId);
      hostProfile = process.env.BENCH_HOST_PROFILE ? profileHost(process.env.BENCH_HOST_PROFILE) : undefined;
    }
  });
  // The host's garbage collections over the same steady window (n=1): their pauses land in the tail.
  const gcObserver = new PerformanceObserver((list) => {
    if (cpu.at && !cpu.end) for (const e of list.getEntries()) gcPauses.push(e.duration);
  });
  gcObserver.observe({ entryTypes: ['gc'] });
  const loopDelay = monitorEventLoopDelay({ resolution: 5 });
  loopDelay.enable();
  const t0 = performance.now();
  // BENCH_UI_WATCH=1: each single session is watched from a window's WebSocket (another process).
  const ui = process.env.BENCH_UI_WATCH && n === 1 ? await uiWatchers(host, dataDir) : undefined;
  for (let i = 0; i < n; i++) {
    const { session } = host.log.createSession({ record: { agent } });
    fs.mkdirSync(host.hands.workDirOf(session.id), { recursive: true });
    fs.writeFileSync(path.join(host.hands.workDirOf(session.id), 'note.txt'), 'a short note\n');
    ids.push(session.id);
    await ui?.watch(session.id);
    host.log.emitEvent(session.id, { type: 'user.message', content: [{ type: 'text', text: `bench ${session.id}` }] });
  }
  const deadline = Date.now() + 600_000;
  while (idle < n) {
    if (Date.now() > deadline) throw new Error('sessions did not finish in 10 minutes');
    await new Promise((r) => setTimeout(r, 50));
  }
  const wall = (performance.now() - t0) / 1000;
  stopCounting();
  const stillPending = ids.filter((id) => hasWork(analyse(host.log.getEvents(id, { limit: 100_000 })))).length;
  if (stillPending) throw new Error(`${stillPending} sessions did not finish`);
  const steady = { dispatch: [] as number[], back: [] as number[], both: [] as number[] };
  const startup = { dispatch: [] as number[], back: [] as number[], both: [] as number[] };
  // The dispatch leg split at the commit of span.model_request_end (ms resolution).
  const toEnd: number[] = [];
  const endToDispatch: number[] = [];
  const perSession = new Map<string, ModelTiming[]>();
  for (const r of await model.timings()) (perSession.get(r.session) ?? perSession.set(r.session, []).get(r.session)!).push(r);
  // Steady state begins once every brain has made its first WARM round trips: a brain's first
  // round trips run cold code (V8 compiles it lazily), and while brains start, their start-up
  // (a Node process, the bundle, the SDK's first request) shares the two cores with the rest.
  const steadyFrom = Math.max(...ids.map((id) => calls.get(id)?.[WARM - 1]?.done ?? Infinity));
  const ramp = (steadyFrom - (performance.timeOrigin + t0)) / 1000;
  for (const id of ids) {
    const reqs = perSession.get(id) ?? [];
    const cs = calls.get(id) ?? [];
    const ends = host.log.getEvents(id, { types: ['span.model_request_end'], limit: 1000 });
    for (let k = 0; k < cs.length; k++) {
      const finished = reqs[k]?.finished;
      const nextArrived = reqs[k + 1]?.arrived;
      if (finished === undefined || nextArrived === undefined) continue;
      const into = k >= WARM && finished >= steadyFrom ? steady : startup;
      const d = cs[k]!.dispatched - finished;
      const b = nextArrived - cs[k]!.done;
      into.dispatch.push(d);
      into.back.push(b);
      into.both.push(d + b);
      const endAt = ends[k] ? Date.parse(ends[k]!.processed_at) : undefined;
      if (into === steady && endAt !== undefined && process.env.BENCH_SPLIT) {
        toEnd.push(endAt - finished);
        endToDispatch.push(cs[k]!.dispatched - endAt);
      }
    }
  }
  if (cpu.at && cpu.end) {
    const trips = cpu.trips - WARM;
    gcTrips += trips;
    cpuPerTrip.push({ host: (cpu.end.host - cpu.at.host) / trips, brain: (cpu.end.brain - cpu.at.brain) / trips, model: (cpu.end.model - cpu.at.model) / trips });
  }
  gcObserver.disconnect();
  if (ui) {
    const seen = await ui.stop();
    const logged = ids.reduce((t, id) => t + host.log.getSession(id).last_seq, 0);
    if (seen !== logged) console.log(`   the UI watcher saw ${seen} of ${logged} events`);
  }
  const errors = ids.filter((id) => host.log.getEvents(id, { types: ['session.error'] }).length > 0).length;
  await host.close();
  await model.stop();
  fs.rmSync(dataDir, { recursive: true, force: true });
  loopDelay.disable();
  if (process.env.BENCH_SPLIT) {
    console.log(`   host event loop delay p50/p99/max ${fmt(loopDelay.percentile(50) / 1e6, 1)} / ${fmt(loopDelay.percentile(99) / 1e6, 1)} / ${fmt(loopDelay.max / 1e6, 1)} ms`);
    console.log(`   split (n=${n}): stream end → end logged p50/p99 ${fmt(percentile(toEnd, 50), 1)} / ${fmt(percentile(toEnd, 99), 1)} ms; end logged → dispatch ${fmt(percentile(endToDispatch, 50), 1)} / ${fmt(percentile(endToDispatch, 99), 1)} ms`);
  }
  return { n, wall, ramp, errors, steady, startup };
}

type Level = Awaited<ReturnType<typeof level>>;

async function sequence<T>(count: number, run: () => Promise<T>): Promise<T[]> {
  const out: T[] = [];
  for (let i = 0; i < count; i++) out.push(await run());
  return out;
}
const joined = (parts: Level['steady'][]) => ({
  dispatch: parts.flatMap((p) => p.dispatch),
  back: parts.flatMap((p) => p.back),
  both: parts.flatMap((p) => p.both),
});

function merge(...runs: Level[]): Level {
  return {
    ...runs[0]!,
    wall: runs.reduce((t, r) => t + r.wall, 0),
    ramp: runs.reduce((t, r) => t + r.ramp, 0),
    steady: joined(runs.map((r) => r.steady)),
    startup: joined(runs.map((r) => r.startup)),
  };
}

async function series(toolMs: number, levels: number[]) {
  TOOL_MS = toolMs;
  console.log(
    toolMs === 0
      ? '\ntools take no time: every session loops flat out, so this measures the machine saturated (throughput), not idle overhead'
      : `\ntools take ${toolMs / 2}–${(toolMs * 3) / 2} ms (a command on a remote hand: time that costs this machine nothing)`,
  );
  // BENCH_IDLE_FLOOR=0 skips it (about a minute per second of tool time).
  if (toolMs > 0 && process.env.BENCH_IDLE_FLOOR !== '0') await printIdleFloor(() => toolMs * (0.5 + Math.random()));
  console.log(
    'sessions  steady round trips  stream end→dispatch p50/p99  result→next request p50/p99  overhead p50/p99    │ start-up round trips  overhead p50/p99    steady after   wall',
  );
  let baseline = 0;
  let best = 0;
  let broken = false;
  for (const n of levels) {
    // The single-session baseline is several runs merged, so its p99 is not its largest sample.
    const r = n === 1 ? merge(...(await sequence(BASELINE_RUNS, () => level(1)))) : await level(n);
    const p99 = percentile(r.steady.both, 99);
    if (n === levels[0]) baseline = p99;
    const ok = p99 <= 2 * baseline;
    if (!ok) broken = true;
    if (!broken) best = n;
    const pair = (a: number[]) => `${fmt(percentile(a, 50), 2)} / ${fmt(percentile(a, 99), 2)} ms`;
    const throughput = r.steady.both.length / Math.max(0.001, r.wall - r.ramp);
    if (n === 1 && cpuPerTrip.length) {
      const mean = (k: 'host' | 'brain' | 'model') => cpuPerTrip.reduce((t, c) => t + c[k], 0) / cpuPerTrip.length;
      console.log(`   CPU per steady round trip (n=1, mean of ${cpuPerTrip.length} runs): host ${fmt(mean('host'), 2)} ms, brain ${fmt(mean('brain'), 2)} ms; the bench's model server (${process.env.BENCH_MODEL ?? 'lean'}) ${fmt(mean('model'), 2)} ms`);
      const gcTotal = gcPauses.reduce((t, d) => t + d, 0);
      console.log(`   host garbage collections over those round trips: ${gcPauses.length} (one per ${fmt(gcTrips / Math.max(1, gcPauses.length), 0)} round trips), pause p50 ${fmt(percentile(gcPauses, 50), 2)} / max ${fmt(Math.max(0, ...gcPauses), 2)} ms, ${fmt(gcTotal / Math.max(1, gcTrips), 3)} ms per round trip`);
      cpuPerTrip.length = 0;
      gcPauses.length = 0;
      gcTrips = 0;
    }
    console.log(
      `${String(n).padStart(8)}  ${String(r.steady.both.length).padStart(18)}  ${pair(r.steady.dispatch).padStart(27)}  ${pair(r.steady.back).padStart(28)}  ${pair(r.steady.both).padStart(18)}    │ ${String(r.startup.both.length).padStart(20)}  ${pair(r.startup.both).padStart(18)}  ${`${fmt(r.ramp, 2)} s`.padStart(13)}  ${fmt(r.wall, 1)} s  ${fmt(throughput, 0)} turns/s` +
        `${r.errors ? `  (${r.errors} sessions errored)` : ''}${ok ? '' : '  (steady p99 > 2× single)'}`,
    );
  }
  console.log(`largest level (from the smallest up) whose steady overhead p99 stays within 2× the single-session p99 (${fmt(baseline, 2)} ms): ${best} sessions`);
  return best;
}

async function main() {
  ensureBuilt();
  console.log(
    `corral bench:brain — ${os.cpus().length} cores, node ${process.version}, ${TURNS} tool round trips per session, ${Number(process.env.BENCH_MODEL_MS ?? 0) > 0 ? `the model answers after ${process.env.BENCH_MODEL_MS} ms (BENCH_MODEL_MS)` : 'the model answers at once'}.\n` +
      'Overhead = model stream end → tool dispatch on the hand, plus tool result → next model request.\n' +
      `Steady: round trips after every brain has made its first ${WARM} (sessions running together). Start-up: the rest — a brain's\n` +
      "first round trips run cold code, and brains starting share the cores with the others. Both are printed; the target uses steady.",
  );
  console.log(`load average at start: ${os.loadavg().map((l) => fmt(l, 2)).join(', ')}`);
  await printWakeFloor('at start');
  // BENCH_LONG=only runs just the long-session case, BENCH_LONG=0 skips it.
  const long = process.env.BENCH_LONG ?? '1';
  if (long !== 'only') {
    const levels = (process.env.BENCH_LEVELS ?? '1,10,25,50,75,100').split(',').map(Number);
    const toolTimes = (process.env.BENCH_TOOL_MS ?? '0,1000').split(',').map(Number);
    const results: string[] = [];
    for (const ms of toolTimes) results.push(`tools ${ms} ms: ${await series(ms, levels)} sessions`);
    console.log(`\nsummary (target ≥ 50 concurrent sessions): ${results.join('; ')}`);
  }
  if (long !== '0') await longSessions(entry, TURNS);
  // BENCH_FIRST_TURN=0 skips it: user.message → span.model_request_start, new session and next turn.
  if (process.env.BENCH_FIRST_TURN !== '0') await printFirstTurns(Number(process.env.BENCH_FIRST_TURN_SESSIONS ?? 30));
  await printWakeFloor('at the end');
  console.log(`load average at the end: ${os.loadavg().map((l) => fmt(l, 2)).join(', ')}`);
}

/** The machine's floor (bench/wake-floor.ts): a round trip to another process, from idle. */
async function printWakeFloor(when: string): Promise<void> {
  const w = await wakeRoundTrips();
  console.log(`cross-process wake-up round trip ${when} (IPC to a Node process that echoes, from idle): p50 ${fmt(w.p50, 3)} / p99 ${fmt(w.p99, 2)} ms; a tool round trip makes about three`);
}

// Exits when done: a handle left open (a lingering brain's pipe, a worker) must not keep the
// bench, or a --cpu-prof of it, waiting.
main().then(() => process.exit(0), (err) => {
  console.error(err);
  process.exit(1);
});
