import { fmt, percentile } from './stats';
import type { SessionTiming, TtftOptions } from './ttft-run';

/** How big one kind's pool (per environment) is made for the pooled mode, and why. */
export interface PoolSizing {
  kind: string;
  /** Hands kept ready per environment of this kind. */
  size: number;
  /** The smallest size with which the replayed takes found a hand every time. */
  demand: number;
  /** Whether the size was set by hand (BENCH_HAND_POOL) rather than from the demand. */
  fixed: boolean;
  note: string;
}

/** One hand taken from a pool, in the replay: when (ms from the start), from which environment, of which kind. */
export interface Take {
  at: number;
  env: string;
  kind: string;
}

/** How the pool refills (hand-pool.ts, hand-pool-slots.ts): one hand made at a time, none within quietMs of a take. */
export interface RefillModel {
  /** ms to make one hand, per kind. */
  makeMs: Record<string, number>;
  quietMs: number;
  atOnce: number;
}

/**
 * The takes the pooled mode will see, from the decoupled mode's sessions: each worker's sessions
 * in order, at their times, less the hand waits the pool saves (a tool session with a pooled
 * hand ends sooner, and the worker's next sessions start sooner: takes come faster than in the
 * decoupled mode, which is how a pool sized from its average rate ran dry).
 */
export function pooledTakes(o: TtftOptions, decoupled: SessionTiming[]): Take[] {
  const perWorker = new Set(o.environments.filter((e) => e.perWorker).map((e) => e.name));
  const takes: Take[] = [];
  for (const k of new Set(decoupled.map((s) => s.worker))) {
    let saved = 0;
    for (const s of decoupled.filter((x) => x.worker === k).sort((a, b) => a.at - b.at)) {
      if (s.tool && s.toolAt !== undefined) takes.push({ at: s.toolAt - saved, env: perWorker.has(s.env) ? `${s.env}-w${k}` : s.env, kind: s.env });
      saved += s.firstToolHand ?? 0;
    }
  }
  return takes.sort((a, b) => a.at - b.at);
}

/**
 * Replays takes against pools that start full and are refilled as hand-pool.ts does (a taken or
 * missed hand is replaced; `atOnce` made at a time, the emptiest pool's first, none started
 * within `quietMs` of a take); returns the misses per environment.
 */
export function replayPools(takes: Take[], sizeOf: (kind: string) => number, m: RefillModel): Map<string, number> {
  const envs = new Map<string, { kind: string; size: number; ready: number; wanted: number; misses: number }>();
  for (const t of takes) if (!envs.has(t.env)) envs.set(t.env, { kind: t.kind, size: sizeOf(t.kind), ready: sizeOf(t.kind), wanted: 0, misses: 0 });
  const making: { env: string; done: number }[] = [];
  let lastTake = -Infinity;
  let next = 0;
  const STEP = 5;
  const end = (takes.at(-1)?.at ?? 0) + STEP;
  for (let t = 0; t <= end; t += STEP) {
    for (let i = making.length - 1; i >= 0; i--) if (making[i]!.done <= t) envs.get(making.splice(i, 1)[0]!.env)!.ready += 1;
    for (; next < takes.length && takes[next]!.at <= t; next++) {
      const p = envs.get(takes[next]!.env)!;
      if (p.ready > 0) p.ready -= 1;
      else p.misses += 1;
      p.wanted += 1;
      lastTake = t;
    }
    while (making.length < m.atOnce && t - lastTake >= m.quietMs) {
      const want = [...envs.entries()].filter(([, p]) => p.wanted > 0).sort(([, a], [, b]) => a.ready / a.size - b.ready / b.size);
      if (want.length === 0) break;
      const [env, p] = want[0]!;
      p.wanted -= 1;
      making.push({ env, done: t + (m.makeMs[p.kind] ?? 10_000) });
    }
  }
  return new Map([...envs.entries()].map(([env, p]) => [env, p.misses]));
}

/**
 * Sizes each kind's pool for the takes the pooled mode will see (pooledTakes): the smallest sizes
 * with which a replay of them (replayPools) misses none, a hand taking as long to make as a
 * session's own provisioning did in the decoupled mode (its p95, a full clone included; the pool
 * unpacks a kept clone and is quicker, so this errs large). Bursts, not the average rate, are
 * what runs a pool dry: the replay has them where they fell. A pool smaller than that runs dry,
 * and the sessions that find it empty wait for a full provisioning: the 50 ms target cannot then
 * be met, and the output says so.
 */
export function sizePools(o: TtftOptions, decoupled: SessionTiming[], fixed?: number, refill: Omit<RefillModel, 'makeMs'> = { quietMs: 1000, atOnce: 1 }): PoolSizing[] {
  const makeMs = Object.fromEntries(
    o.environments.map((e) => {
      const p95 = percentile(decoupled.flatMap((s) => (s.env === e.name && s.tool && s.firstToolHand !== undefined ? [s.firstToolHand] : [])), 95);
      return [e.name, Number.isFinite(p95) ? p95 : 10_000];
    }),
  );
  const takes = pooledTakes(o, decoupled);
  const size: Record<string, number> = Object.fromEntries(o.environments.map((e) => [e.name, 1]));
  const missesOf = (kind: string, misses: Map<string, number>) => [...misses.entries()].filter(([env]) => takes.find((t) => t.env === env)?.kind === kind).reduce((n, [, m]) => n + m, 0);
  for (let i = 0; i < 64; i++) {
    const misses = replayPools(takes, (k) => size[k]!, { ...refill, makeMs });
    const worst = o.environments.map((e) => e.name).filter((k) => size[k]! < 16).sort((a, b) => missesOf(b, misses) - missesOf(a, misses))[0];
    if (worst === undefined || missesOf(worst, misses) === 0) break;
    size[worst]! += 1;
  }
  return o.environments.map((e) => {
    const demand = size[e.name]!;
    const got = fixed ?? demand;
    const mine = takes.filter((t) => t.kind === e.name);
    const envs = new Set(mine.map((t) => t.env)).size;
    const why = `${mine.length} takes over ${envs} environment(s) replayed, one hand made at a time in ${fmt(makeMs[e.name]! / 1000, 1)} s`;
    const note =
      got >= demand
        ? `${e.name}: pool of ${got} per environment for a demand of ${demand} (${why})`
        : `${e.name}: pool of ${got} per environment is SMALLER than the demand of ${demand} (${why}): sessions will find it empty and wait for a full provisioning; the 50 ms first-tool-call target cannot be met with it`;
    return { kind: e.name, size: got, demand, fixed: fixed !== undefined, note };
  });
}
