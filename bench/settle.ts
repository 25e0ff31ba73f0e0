import os from 'node:os';

/** The share of all cores' time spent busy since `before` (os.cpus() counters), 0–1. */
function busySince(before: os.CpuInfo[], after: os.CpuInfo[]): number {
  let busy = 0;
  let all = 0;
  after.forEach((c, i) => {
    const b = before[i]?.times ?? c.times;
    const d = (k: keyof os.CpuInfo['times']) => c.times[k] - b[k];
    const idle = d('idle');
    const used = d('user') + d('nice') + d('sys') + d('irq');
    busy += used;
    all += used + idle;
  });
  return all > 0 ? busy / all : 0;
}

/** How a wait for an idle machine ended. */
export interface Settled {
  /** How long it waited (ms). */
  waitedMs: number;
  /** The cores' busy share over the last second of the wait, 0–1. */
  busy: number;
  /** It stopped at the cap with the machine still busy. */
  capped: boolean;
}

/**
 * Waits until the machine is idle — its cores together under `threshold` busy, for `seconds`
 * seconds in a row — or `capMs` has passed. A benchmark's modes run one after the other: what one leaves
 * running (containers being removed, folders deleted, writeback) must not be measured as the
 * next one's cost. The 1-minute load average lags by minutes, so the cores' own counters decide.
 */
export async function settle(o: { threshold?: number; seconds?: number; capMs?: number } = {}): Promise<Settled> {
  const threshold = o.threshold ?? 0.1;
  const need = o.seconds ?? 2;
  const capMs = o.capMs ?? 60_000;
  const start = Date.now();
  let quiet = 0;
  for (;;) {
    const before = os.cpus();
    await new Promise((r) => setTimeout(r, 1000));
    const busy = busySince(before, os.cpus());
    quiet = busy < threshold ? quiet + 1 : 0;
    const waitedMs = Date.now() - start;
    if (quiet >= need) return { waitedMs, busy, capped: false };
    if (waitedMs >= capMs) return { waitedMs, busy, capped: true };
  }
}
