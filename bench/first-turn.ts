/**
 * `npm run bench:first-turn`: how soon a brain's model request starts after a `user.message`, with a
 * model that answers at once — for a new session (its brain must be had first) and for the next
 * turn of a running one (its brain lingers), sent at once and again after a pause (LATER_MS).
 * Sessions run one after another with a pause between them (BENCH_GAP_MS), as on an unloaded
 * machine; prints p50/p95 of each, per mode:
 * `fork` (a brain forked when the session needs one), `pool-ask` (a pre-started brain bound to the
 * session, which then reads the log, the agent and the hands) and `pool` (bound with them,
 * session, brain-pool.ts). Brains run from the built entry (out/main/brain-entry.js).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { forkBrain } from '../main/brain/supervisor';
import { brainPrime } from '../main/brain/brain-prime';
import { createHost } from '../main/host';
import { ensureBuilt, brainEntry } from './build';
import { startModelProcess } from './model-handle';
import { fmt, percentile } from './stats';

const SESSIONS = Number(process.env.BENCH_SESSIONS ?? 40);
const GAP_MS = Number(process.env.BENCH_GAP_MS ?? 300);
/**
 * The pause before a third turn. The second turn follows the first at once, while the pool (in
 * the pool modes) starts the brain that replaces the one just bound; the third comes once that
 * start is over, as a person's next message would.
 */
const LATER_MS = Number(process.env.BENCH_LATER_MS ?? 700);

/** user.message → span.model_request_start (ms) of each session's first turn, second (at once) and third (after LATER_MS). */
export async function firstTurns(mode: FirstTurnMode, sessions = SESSIONS, gapMs = GAP_MS) {
  const model = await startModelProcess(0);
  process.env.ANTHROPIC_BASE_URL = model.url;
  process.env.ANTHROPIC_API_KEY = 'bench';
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'corral-bench-first-'));
  const pool = mode !== 'fork' ? new (await import('../main/brain/brain-pool')).BrainPool({ entry: brainEntry, size: Number(process.env.CORRAL_BRAIN_POOL ?? 2) }) : undefined;
  // pool: bound with the log's start, the agent and the hands (brain-prime.ts), as the supervisor
  // binds; pool-ask: bound with nothing, the brain asks for them (before brain-prime.ts).
  const prime = mode === 'pool' ? (id: string) => () => brainPrime(host.log, host.hands, id) : () => undefined;
  const host = createHost({ dataDir, brains: { spawn: pool ? (id) => pool.spawn(id, prime(id)) : (id) => forkBrain(brainEntry, id) } });
  await host.started;
  pool?.fill();
  const asked = new Map<string, number>();
  const started = new Map<string, number>();
  const idle = new Map<string, number>();
  const stop = host.log.subscribeAll(({ sessionId, event }) => {
    if (event.type === 'span.model_request_start' && asked.has(sessionId) && !started.has(sessionId)) started.set(sessionId, performance.now() - asked.get(sessionId)!);
    if (event.type === 'session.status_idle') idle.set(sessionId, (idle.get(sessionId) ?? 0) + 1);
  });
  const until = async (ok: () => boolean) => {
    const deadline = Date.now() + 60_000;
    while (!ok()) {
      if (Date.now() > deadline) throw new Error('a session did not go idle in a minute');
      await new Promise((r) => setTimeout(r, 2));
    }
  };
  const agent = { type: 'agent', id: 'agent_bench', version: 1, name: 'bench', model: { id: 'bench' }, system: null, tools: [] };
  const first: number[] = [];
  const next: number[] = [];
  const later: number[] = [];
  // Let the pool fill before the first session (it is started with the host, ahead of need).
  await new Promise((r) => setTimeout(r, 1500));
  for (let i = 0; i < sessions; i++) {
    const { session } = host.log.createSession({ record: { agent } });
    for (const [turn, into] of [[1, first], [2, next], [3, later]] as const) {
      if (turn === 3) await new Promise((r) => setTimeout(r, LATER_MS));
      started.delete(session.id);
      asked.set(session.id, performance.now());
      host.log.emitEvent(session.id, { type: 'user.message', content: [{ type: 'text', text: `bench ${session.id} turn ${turn}` }] });
      await until(() => (idle.get(session.id) ?? 0) >= turn && started.has(session.id));
      into.push(started.get(session.id)!);
    }
    await new Promise((r) => setTimeout(r, gapMs));
  }
  stop();
  await host.close();
  pool?.stop();
  await model.stop();
  fs.rmSync(dataDir, { recursive: true, force: true });
  return { first, next, later };
}

/** fork: a brain forked per session; pool-ask: pooled, asks for its first reads; pool: pooled and primed. */
export type FirstTurnMode = 'fork' | 'pool-ask' | 'pool';

const pair = (a: number[]) => `${fmt(percentile(a, 50), 1)} / ${fmt(percentile(a, 95), 1)} ms`;

/** Prints user.message → span.model_request_start for each mode (bench:first-turn, and the end of bench:brain). */
export async function printFirstTurns(sessions = SESSIONS, modes = (process.env.BENCH_MODES ?? 'fork,pool-ask,pool').split(',') as FirstTurnMode[]) {
  console.log(`\nfirst turns: ${sessions} sessions one after another (${GAP_MS} ms apart), the model answers at once; load average ${os.loadavg().map((l) => fmt(l, 2)).join(', ')}`);
  console.log(`mode   new session: user.message → model_request_start p50/p95   next turn p50/p95   a turn ${LATER_MS} ms later p50/p95`);
  const out: Record<string, unknown> = {};
  for (const mode of modes) {
    const r = await firstTurns(mode, sessions);
    const p = (a: number[]) => ({ p50: percentile(a, 50), p95: percentile(a, 95) });
    out[mode] = { first: p(r.first), next: p(r.next), later: p(r.later), n: r.first.length };
    console.log(`${mode.padEnd(8)}  ${pair(r.first).padStart(56)}   ${pair(r.next).padStart(17)}   ${pair(r.later).padStart(27)}`);
  }
  console.log(JSON.stringify(out));
  return out;
}

async function main() {
  ensureBuilt();
  console.log(`corral bench:first-turn — ${os.cpus().length} cores`);
  await printFirstTurns();
  console.log(`load average at the end: ${os.loadavg().map((l) => fmt(l, 2)).join(', ')}`);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  // Exits once printed, as bench:brain does: after the pool modes a handle (not tracked down)
  // kept the process alive for minutes after its figures.
  main().then(
    () => process.exit(0),
    (err) => {
      console.error(err);
      process.exit(1);
    },
  );
}
