/**
 * bench:ttft's wait for an idle machine (bench/settle.ts) reads the cores' own counters: while
 * every core spins, it does not call the machine idle, and it gives up at its cap saying so.
 */
import { Worker } from 'node:worker_threads';
import os from 'node:os';
import { afterEach, describe, expect, it } from 'vitest';
import { settle } from '../bench/settle';

describe('bench settle', () => {
  const spinners: Worker[] = [];
  afterEach(async () => {
    await Promise.all(spinners.splice(0).map((w) => w.terminate()));
  });

  it('does not call a machine whose cores all spin idle, and stops at its cap', async () => {
    for (let k = 0; k < os.cpus().length; k++) spinners.push(new Worker('for (;;) {}', { eval: true }));
    const s = await settle({ capMs: 2000 });
    expect(s.capped).toBe(true);
    expect(s.waitedMs).toBeGreaterThanOrEqual(2000);
    expect(s.busy).toBeGreaterThan(0.5);
  });
});
