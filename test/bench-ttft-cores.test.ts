/**
 * bench:ttft's core sampler (bench/ttft-cores.ts) tells a turn that ran while every core spun
 * from one that ran on a quiet machine; a time it never sampled is NaN, not a guess.
 */
import { Worker } from 'node:worker_threads';
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { afterEach, describe, expect, it } from 'vitest';
import { CoreSampler, SATURATED } from '../bench/ttft-cores';

const spinFor = async (ms: number) => {
  const spinners = Array.from({ length: os.cpus().length }, () => new Worker(`const end = Date.now() + ${ms}; while (Date.now() < end) {}`, { eval: true }));
  await Promise.all(spinners.map((w) => new Promise((r) => w.once('exit', r))));
};

describe('bench:ttft core sampler', () => {
  let sampler: CoreSampler | undefined;
  afterEach(() => sampler?.stop());

  it('sees every core busy while they all spin, and knows nothing of times it did not sample', async () => {
    const before = performance.now();
    sampler = new CoreSampler(50);
    await sampler.start();
    await new Promise((r) => setTimeout(r, 150));
    const from = performance.now();
    await spinFor(800);
    const to = performance.now();
    await new Promise((r) => setTimeout(r, 150));
    await sampler.stop();
    // The middle of the spin: every window there had the cores (nearly) all busy.
    const mid = (from + to) / 2;
    expect(sampler.busiestDuring(mid - 50, mid + 50)).toBeGreaterThanOrEqual(SATURATED);
    expect(sampler.shareAtLeast(SATURATED)).toBeGreaterThan(0.3);
    const mean = sampler.mean();
    expect(mean).toBeGreaterThan(0.3);
    expect(mean).toBeLessThanOrEqual(1);
    // Before it started, and after it stopped: no window, no figure.
    expect(sampler.busiestDuring(before - 1000, before - 500)).toBeNaN();
    expect(sampler.busiestDuring(performance.now() + 1000, performance.now() + 2000)).toBeNaN();
  });
});
