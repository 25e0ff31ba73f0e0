import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { percentile } from '../../bench/stats';

/**
 * Measures how well the host keeps serving while one slow piece of work runs: the event loop's
 * delay (sampled every 10 ms) and the latency of probe calls made over and over meanwhile.
 * Used by test/hands/event-loop.test.ts and `npm run bench:loop`.
 */

/** Event-loop delay while the work ran, in ms: how late the 10 ms sampling timer fired. */
export interface LoopDelay {
  p50: number;
  p99: number;
  max: number;
  /** Timer samples taken (the more the loop turned, the more). */
  samples: number;
}

/** What one kind of probe call saw while the work ran. */
export interface ProbeFigures {
  /** Latency of each call started while the work ran (it may have ended after), in ms. */
  ms: number[];
  /** Messages of calls that failed. */
  failures: string[];
  /** Calls that both started and finished while the work ran. */
  completedDuring: number;
}

export interface ProbeReport<T> {
  value: T;
  /** How long the work took, in ms. */
  durationMs: number;
  loop: LoopDelay;
  probes: Record<string, ProbeFigures>;
}

const RESOLUTION_MS = 10;
/** The histogram records whole intervals between timer runs (ns); the delay is what exceeds the interval. */
const lateness = (intervalNs: number) => Math.max(0, intervalNs / 1e6 - RESOLUTION_MS);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Runs `work` while each probe is called in a loop (a pause of `gapMs` between calls). */
export async function probeWhile<T>(work: () => Promise<T>, probes: Record<string, () => Promise<void>>, gapMs = 20): Promise<ProbeReport<T>> {
  const histogram = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
  histogram.enable();
  // The histogram records nothing for its first interval (nor for the first after a reset): let
  // it run before the work starts, or a loop blocked from the start would go unseen.
  await sleep(3 * RESOLUTION_MS);
  let ended = Infinity;
  const figures: Record<string, ProbeFigures> = {};
  const loops = Object.entries(probes).map(async ([name, probe]) => {
    const f: ProbeFigures = (figures[name] = { ms: [], failures: [], completedDuring: 0 });
    while (performance.now() < ended) {
      const t0 = performance.now();
      try {
        await probe();
        const t1 = performance.now();
        f.ms.push(t1 - t0);
        if (t1 < ended) f.completedDuring++;
      } catch (err) {
        f.failures.push(err instanceof Error ? err.message : String(err));
      }
      await sleep(gapMs);
    }
  });
  const started = performance.now();
  try {
    const value = await work();
    ended = performance.now();
    // A loop blocked by the work is recorded when the sampling timer next runs: let it.
    await sleep(2 * RESOLUTION_MS);
    histogram.disable();
    // Calls in flight when the work ended still count: under a blocked loop they are the slow ones.
    await Promise.all(loops);
    return {
      value,
      durationMs: ended - started,
      loop: { p50: lateness(histogram.percentile(50)), p99: lateness(histogram.percentile(99)), max: lateness(histogram.max), samples: histogram.count },
      probes: figures,
    };
  } finally {
    ended = Math.min(ended, performance.now());
    histogram.disable();
    await Promise.all(loops);
  }
}

/** One line of figures for a report: loop delay and each probe's p50/max latency. */
export function describeReport(label: string, r: ProbeReport<unknown>): string {
  const fmt = (n: number) => (Number.isNaN(n) ? '–' : n.toFixed(1));
  const probes = Object.entries(r.probes).map(([name, f]) => `${name} ${f.ms.length} calls (${f.completedDuring} done during) p50 ${fmt(percentile(f.ms, 50))} max ${fmt(f.ms.length > 0 ? Math.max(...f.ms) : Number.NaN)} ms`);
  return `${label}: ${fmt(r.durationMs)} ms; event-loop delay p50 ${fmt(r.loop.p50)} p99 ${fmt(r.loop.p99)} max ${fmt(r.loop.max)} ms (${r.loop.samples} samples); ${probes.join('; ')}`;
}
