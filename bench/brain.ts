/**
 * `npm run bench:brain`: the host's overhead per turn with a model server that answers at once.
 * For N sessions running together (each one user message, then TURNS tool round trips), prints
 * p50/p99 of (model stream end → tool dispatch) and (tool result → next model request), and the
 * largest N whose p99 stays within twice the single-session p99. Target (issue 3): ≥ 50.
 * Brains run from the built entry (out/main/brain-entry.js), as in the app; it is built first
 * if missing or stale.
 */
import { fork, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { analyse, hasWork } from '../main/brain/analyse';
import { forkBrain } from '../main/brain/supervisor';
import { createHost } from '../main/host';
import { fmt, percentile } from './stats';

const root = path.resolve(import.meta.dirname, '..');
const entry = path.join(root, 'out/main/brain-entry.js');
const TURNS = Number(process.env.BENCH_TURNS ?? 30);
let TOOL_MS = 0;
/** Epoch milliseconds with sub-millisecond precision, comparable across processes. */
const now = () => performance.timeOrigin + performance.now();

interface Timing {
  session: string;
  arrived?: number;
  finished?: number;
}

/** The model server runs in its own process (see model-process.ts). */
async function startModelProcess() {
  const child = fork(path.join(root, 'bench/model-process.ts'), [], { execArgv: ['--import', 'tsx'], env: { ...process.env, BENCH_TURNS: String(TURNS) } });
  const url = await new Promise<string>((resolve) => child.once('message', (m: { url: string }) => resolve(m.url)));
  return {
    url,
    timings: () =>
      new Promise<Timing[]>((resolve) => {
        child.once('message', (m: { timings: Timing[] }) => resolve(m.timings));
        child.send({ t: 'timings' });
      }),
    stop: () => new Promise<void>((resolve) => (child.once('exit', () => resolve()), child.send({ t: 'stop' }))),
  };
}

function ensureBuilt(): void {
  const newest = (dir: string): number =>
    Math.max(0, ...fs.readdirSync(dir, { recursive: true, encoding: 'utf8' }).map((f) => fs.statSync(path.join(dir, f)).mtimeMs));
  if (fs.existsSync(entry) && fs.statSync(entry).mtimeMs >= newest(path.join(root, 'main'))) return;
  console.log('building the brain entry (electron-vite, main only)…');
  const r = spawnSync('npx', ['electron-vite', 'build'], { cwd: root, env: { ...process.env, CORRAL_BUILD_ONLY: 'main' }, stdio: 'inherit' });
  if (r.status !== 0) throw new Error('build failed');
}

async function level(n: number) {
  const model = await startModelProcess();
  process.env.ANTHROPIC_BASE_URL = model.url;
  process.env.ANTHROPIC_API_KEY = 'bench';
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'corral-bench-brain-'));
  const host = createHost({ dataDir, brains: { spawn: (id) => forkBrain(entry, id), maxRestartsPerMinute: 10_000 } });
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
  const stopCounting = host.log.subscribeAll(({ event }) => {
    if (event.type === 'session.status_idle') idle++;
  });
  const loopDelay = monitorEventLoopDelay({ resolution: 5 });
  loopDelay.enable();
  const t0 = performance.now();
  for (let i = 0; i < n; i++) {
    const { session } = host.log.createSession({ record: { agent } });
    fs.mkdirSync(host.hands.workDirOf(session.id), { recursive: true });
    fs.writeFileSync(path.join(host.hands.workDirOf(session.id), 'note.txt'), 'a short note\n');
    ids.push(session.id);
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
  const dispatch: number[] = [];
  const back: number[] = [];
  // The dispatch leg split at the commit of span.model_request_end (ms resolution).
  const toEnd: number[] = [];
  const endToDispatch: number[] = [];
  const perSession = new Map<string, Timing[]>();
  for (const r of await model.timings()) (perSession.get(r.session) ?? perSession.set(r.session, []).get(r.session)!).push(r);
  // Steady state: count only round trips after every brain has started (made its first request).
  const rampEnd = Math.max(...ids.map((id) => perSession.get(id)?.[0]?.arrived ?? Infinity));
  const ramp = (rampEnd - (performance.timeOrigin + t0)) / 1000;
  for (const id of ids) {
    const reqs = perSession.get(id) ?? [];
    const cs = calls.get(id) ?? [];
    const ends = host.log.getEvents(id, { types: ['span.model_request_end'], limit: 1000 });
    for (let k = 0; k < cs.length; k++) {
      if (reqs[k]?.finished === undefined || reqs[k]!.finished! < rampEnd) continue;
      const endAt = ends[k] ? Date.parse(ends[k]!.processed_at) : undefined;
      if (endAt !== undefined && process.env.BENCH_SPLIT) {
        toEnd.push(endAt - reqs[k]!.finished!);
        endToDispatch.push(cs[k]!.dispatched - endAt);
      }
      if (reqs[k]?.finished !== undefined) dispatch.push(cs[k]!.dispatched - reqs[k]!.finished!);
      if (reqs[k + 1]?.arrived !== undefined) back.push(reqs[k + 1]!.arrived! - cs[k]!.done);
    }
  }
  const errors = ids.filter((id) => host.log.getEvents(id, { types: ['session.error'] }).length > 0).length;
  await host.close();
  await model.stop();
  fs.rmSync(dataDir, { recursive: true, force: true });
  const both = dispatch.map((d, i) => d + (back[i] ?? 0));
  loopDelay.disable();
  if (process.env.BENCH_SPLIT) {
    console.log(`   host event loop delay p50/p99/max ${fmt(loopDelay.percentile(50) / 1e6, 1)} / ${fmt(loopDelay.percentile(99) / 1e6, 1)} / ${fmt(loopDelay.max / 1e6, 1)} ms`);
    console.log(`   split (n=${n}): stream end → end logged p50/p99 ${fmt(percentile(toEnd, 50), 1)} / ${fmt(percentile(toEnd, 99), 1)} ms; end logged → dispatch ${fmt(percentile(endToDispatch, 50), 1)} / ${fmt(percentile(endToDispatch, 99), 1)} ms`);
  }
  return { n, turns: dispatch.length, wall, ramp, errors, dispatch, back, both };
}

function merge(...runs: Awaited<ReturnType<typeof level>>[]) {
  const [a] = runs;
  return {
    ...a!,
    turns: runs.reduce((t, r) => t + r.turns, 0),
    wall: runs.reduce((t, r) => t + r.wall, 0),
    ramp: runs.reduce((t, r) => t + r.ramp, 0),
    dispatch: runs.flatMap((r) => r.dispatch),
    back: runs.flatMap((r) => r.back),
    both: runs.flatMap((r) => r.both),
  };
}

async function series(toolMs: number, levels: number[]) {
  TOOL_MS = toolMs;
  console.log(
    toolMs === 0
      ? '\ntools take no time: every session loops flat out, so this measures the machine saturated (throughput), not idle overhead'
      : `\ntools take ${toolMs / 2}–${(toolMs * 3) / 2} ms (a command on a remote hand: time that costs this machine nothing)`,
  );
  console.log('sessions  round trips  stream end→dispatch p50/p99   result→next request p50/p99   per-turn overhead p50/p99   all started after   wall');
  let baseline = 0;
  let best = 0;
  let broken = false;
  for (const n of levels) {
    // The single-session baseline is three runs merged, so its p99 is not one sample.
    const r = n === 1 ? merge(await level(1), await level(1), await level(1)) : await level(n);
    const p99 = percentile(r.both, 99);
    if (n === levels[0]) baseline = p99;
    const ok = p99 <= 2 * baseline;
    if (!ok) broken = true;
    if (!broken) best = n;
    const pair = (a: number[]) => `${fmt(percentile(a, 50), 2)} / ${fmt(percentile(a, 99), 2)} ms`;
    const throughput = r.turns / Math.max(0.001, r.wall - r.ramp);
    console.log(
      `${String(n).padStart(8)}  ${String(r.turns).padStart(11)}  ${pair(r.dispatch).padStart(28)}  ${pair(r.back).padStart(29)}  ${pair(r.both).padStart(26)}  ${`${fmt(r.ramp, 2)} s`.padStart(17)}  ${fmt(r.wall, 1)} s  ${fmt(throughput, 0)} turns/s` +
        `${r.errors ? `  (${r.errors} sessions errored)` : ''}${ok ? '' : '  (p99 > 2× single)'}`,
    );
  }
  console.log(`largest level (from the smallest up) whose overhead p99 stays within 2× the single-session p99 (${fmt(baseline, 2)} ms): ${best} sessions`);
  return best;
}

async function main() {
  ensureBuilt();
  console.log(
    `corral bench:brain — ${os.cpus().length} cores, node ${process.version}, ${TURNS} tool round trips per session, the model answers at once.\n` +
      'Overhead = model stream end → tool dispatch on the hand, plus tool result → next model request. Brains that are still\n' +
      'starting (the first request of the last session) are excluded: figures are for sessions running together.',
  );
  const levels = (process.env.BENCH_LEVELS ?? '1,10,25,50,75,100').split(',').map(Number);
  const toolTimes = (process.env.BENCH_TOOL_MS ?? '0,1000').split(',').map(Number);
  const results: string[] = [];
  for (const ms of toolTimes) results.push(`tools ${ms} ms: ${await series(ms, levels)} sessions`);
  console.log(`\nsummary (target ≥ 50 concurrent sessions): ${results.join('; ')}`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
