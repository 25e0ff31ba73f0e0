import { fmt, percentile } from './stats';
import type { SessionTiming, TtftOptions } from './ttft-run';

/** How big one kind's pool (per environment) is made for the pooled mode, and why. */
export interface PoolSizing {
  kind: string;
  /** Hands kept ready per environment of this kind. */
  size: number;
  /** Hands its sessions can want before a replacement is made: in flight at once, plus those asked for while one is made. */
  demand: number;
  /** Whether the size was set by hand (BENCH_HAND_POOL) rather than from the demand. */
  fixed: boolean;
  note: string;
}

/**
 * Sizes each kind's pool for the demand the decoupled mode just showed on this machine, at this
 * load: a hand is taken by each tool-calling session of the environment, and its replacement takes
 * as long as a hand's provisioning did there (its p95, clone included). Demand = the sessions that
 * can want one at the same time (all `concurrency` for an environment every worker shares, one for
 * an environment of its own) and those that arrive while a replacement is made (their rate ×
 * that time). A pool smaller than that runs dry, and the sessions that find it empty wait for a
 * full provisioning: the 50 ms target cannot then be met, and the output says so.
 */
export function sizePools(o: TtftOptions, decoupled: SessionTiming[], wallMs: number, fixed?: number): PoolSizing[] {
  const kinds = o.environments.length;
  return o.environments.map((e) => {
    const tools = decoupled.filter((s) => s.env === e.name && s.tool);
    const refillMs = percentile(tools.flatMap((s) => (s.firstToolHand === undefined ? [] : [s.firstToolHand])), 95);
    // Takes per ms for one environment of this kind (per-worker ones see a worker's share).
    const rate = tools.length / Math.max(1, wallMs) / (e.perWorker ? o.concurrency : 1);
    const inFlight = e.perWorker ? 1 : Math.max(1, Math.ceil(o.concurrency / (o.toolEvery * kinds)));
    // Arrivals while one is made, as a Poisson count: enough for 95% of refills, not just the mean
    // (a pool sized for the mean runs dry about half the time its demand is above it).
    const during = Number.isFinite(refillMs) ? poissonQuantile(rate * refillMs, 0.95) : 1;
    const demand = Math.min(16, inFlight + during);
    const size = fixed ?? demand;
    const why = `${inFlight} at once + ${during} while one is made (95% of the time, at ${fmt(rate * 1000, 2)} takes/s × ${Number.isFinite(refillMs) ? fmt(refillMs / 1000, 1) : '?'} s to make one)`;
    const note =
      size >= demand
        ? `${e.name}: pool of ${size} per environment for a demand of ${demand} (${why})`
        : `${e.name}: pool of ${size} per environment is SMALLER than the demand of ${demand} (${why}): sessions will find it empty and wait for a full provisioning; the 50 ms first-tool-call target cannot be met with it`;
    return { kind: e.name, size, demand, fixed: fixed !== undefined, note };
  });
}

/** The smallest k with P(X ≤ k) ≥ q for X ~ Poisson(mean). */
export function poissonQuantile(mean: number, q: number): number {
  if (!(mean > 0)) return 0;
  let p = Math.exp(-mean);
  let cdf = p;
  let k = 0;
  while (cdf < q && k < 64) {
    k += 1;
    p *= mean / k;
    cdf += p;
  }
  return k;
}
