/**
 * The warm pool's turns for making hands (hand-pool-slots.ts): never more at once than the limit,
 * the emptiest pool's first, none started in the quiet after a take, and takes that never pause
 * do not starve the pool.
 */
import { describe, expect, it } from 'vitest';
import { RefillSlots } from '../../main/hands/hand-pool-slots';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('RefillSlots', () => {
  it('runs at most the limit at once and gives a free turn to the lowest rank, first come among equals', async () => {
    const slots = new RefillSlots(2, 0);
    const ranks = { a: 1, b: 0.5, c: 0, d: 0 };
    const order: string[] = [];
    let running = 0;
    let most = 0;
    const job = async (name: keyof typeof ranks) => {
      if (!(await slots.acquire(() => ranks[name]))) return;
      order.push(name);
      most = Math.max(most, ++running);
      await sleep(20);
      running -= 1;
      slots.release();
    };
    await Promise.all((['a', 'b', 'c', 'd'] as const).map(job));
    // a and b took the two free turns at once; then c before d (equal rank, asked first).
    expect(order).toEqual(['a', 'b', 'c', 'd']);
    expect(most).toBe(2);
  });

  it('starts nothing in the quiet after a take, and after MAX_QUIET_WAITS quiets of takes that never pause starts anyway', async () => {
    const slots = new RefillSlots(1, 100);
    slots.taken();
    let startedAt: number | undefined;
    const t0 = Date.now();
    const got = slots.acquire(() => 0).then((ok) => ((startedAt = Date.now() - t0), ok));
    await sleep(50);
    expect(startedAt).toBeUndefined();
    // A take every 50 ms for 2 s: the quiet never comes, the cap (5 × 100 ms) lets it start.
    const taking = (async () => {
      for (let i = 0; i < 40; i++, await sleep(50)) slots.taken();
    })();
    expect(await got).toBe(true);
    expect(startedAt!).toBeLessThan(1500);
    await taking;
    // Stopped: what still waits is dropped.
    const dropped = slots.acquire(() => 0);
    slots.stop();
    expect(await dropped).toBe(false);
  });
});
