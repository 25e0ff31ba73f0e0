import fs from 'node:fs';
import { performance } from 'node:perf_hooks';

/** A 100 ms window at least this busy counts as the machine saturated. */
export const SATURATED = 0.9;

/** A window of the cores' time: when it ended (performance.now()) and the share of it they were busy, 0–1. */
interface Window {
  from: number;
  to: number;
  busy: number;
}

/** The cores' counters from /proc/stat's first line: busy and all time, in the kernel's ticks. */
async function coreTicks(): Promise<{ busy: number; all: number }> {
  const text = await fs.promises.readFile('/proc/stat', 'utf8');
  const [, user, nice, system, idle, iowait, irq, softirq, steal] = text.slice(0, text.indexOf('\n')).trim().split(/\s+/).map(Number);
  const busy = user! + nice! + system! + irq! + softirq! + (steal ?? 0);
  return { busy, all: busy + idle! + iowait! };
}

/**
 * The cores' busy share in windows of `windowMs`, sampled while a mode runs: whether a turn ran
 * while the machine was saturated (issue 14's next-turn target holds "on a machine that is not
 * saturated"). Read from /proc/stat, asynchronously: the bench is the host, whose loop it shares.
 * Where /proc/stat cannot be read (not Linux) nothing is sampled and every lookup is NaN.
 */
export class CoreSampler {
  private readonly windows: Window[] = [];
  private timer?: NodeJS.Timeout;
  private last?: { at: number; busy: number; all: number };
  /** The read under way, if any (reads never overlap). */
  private reading?: Promise<void>;

  constructor(private readonly windowMs = 100) {}

  async start(): Promise<void> {
    try {
      this.last = { at: performance.now(), ...(await coreTicks()) };
    } catch {
      return;
    }
    this.timer = setInterval(() => void this.sample(), this.windowMs);
  }

  /** Stops sampling, once the window under way is counted too (a turn at the very end has one). */
  async stop(): Promise<void> {
    if (!this.timer) return;
    clearInterval(this.timer);
    this.timer = undefined;
    await this.reading;
    await this.sample();
  }

  private sample(): Promise<void> {
    this.reading ??= this.read().finally(() => (this.reading = undefined));
    return this.reading;
  }

  private async read(): Promise<void> {
    if (!this.last) return;
    try {
      const now = { at: performance.now(), ...(await coreTicks()) };
      const all = now.all - this.last.all;
      // Ticks are 10 ms: a window too short to have counted any says nothing.
      if (all > 0) {
        this.windows.push({ from: this.last.at, to: now.at, busy: (now.busy - this.last.busy) / all });
        this.last = now;
      }
    } catch {
      // /proc/stat went away: the windows so far stand.
    }
  }

  /** The busy share of the busiest window overlapping [from, to] (performance.now() times); NaN if none does. */
  busiestDuring(from: number, to: number): number {
    let max = NaN;
    for (const w of this.windows) if (w.from < to && w.to > from && !(w.busy <= max)) max = w.busy;
    return max;
  }

  /** The busy share over every window sampled; NaN if none. */
  mean(): number {
    const span = this.windows.reduce((t, w) => t + (w.to - w.from), 0);
    return span > 0 ? this.windows.reduce((t, w) => t + w.busy * (w.to - w.from), 0) / span : NaN;
  }

  /** The share of the time sampled that was in windows at least `threshold` busy; NaN if none. */
  shareAtLeast(threshold: number): number {
    const span = this.windows.reduce((t, w) => t + (w.to - w.from), 0);
    return span > 0 ? this.windows.filter((w) => w.busy >= threshold).reduce((t, w) => t + (w.to - w.from), 0) / span : NaN;
  }
}
