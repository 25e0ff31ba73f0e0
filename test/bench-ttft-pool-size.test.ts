/**
 * bench:ttft's pool sizing (ttft-pool-size.ts): takes replayed against pools refilled one hand at
 * a time find the bursts that a size from the average rate misses, and the pooled mode's takes
 * come sooner than the decoupled mode's by the hand waits the pool saves.
 */
import { describe, expect, it } from 'vitest';
import { pooledTakes, replayPools, sizePools, type Take } from '../bench/ttft-pool-size';
import type { SessionTiming, TtftOptions } from '../bench/ttft-run';

const o = {
  concurrency: 2,
  environments: [
    { name: 'docker', config: {} },
    { name: 'ssh', config: {}, perWorker: true },
  ],
} as unknown as TtftOptions;
const s = (x: Partial<SessionTiming> & Pick<SessionTiming, 'env' | 'worker' | 'at'>): SessionTiming => ({ tool: false, toRequest: 1, ttft: 1, nextToRequest: 1, doneAt: x.at + 1000, cloned: false, clonedBeforeModel: false, ...x });

describe('bench:ttft pool sizing', () => {
  it('a burst of takes within one make time empties a pool its average rate would call big enough', () => {
    // Three takes in a second, then nothing for a minute: 3 takes/min on average.
    const takes: Take[] = [0, 400, 800, 60_000].map((at) => ({ at, env: 'docker', kind: 'docker' }));
    const model = { makeMs: { docker: 5000 }, quietMs: 1000, atOnce: 1 };
    expect(replayPools(takes, () => 2, model).get('docker')).toBe(1);
    expect(replayPools(takes, () => 3, model).get('docker')).toBe(0);
    // One at a time: two pools emptied together refill one after the other.
    const two: Take[] = [...takes.slice(0, 3), ...[100, 500, 900].map((at) => ({ at, env: 'ssh-w0', kind: 'ssh' })), { at: 6500, env: 'docker', kind: 'docker' }].sort((a, b) => a.at - b.at);
    expect(replayPools(two, () => 3, model).get('docker')).toBe(1);
  });

  it('the pooled mode\'s takes come sooner by the hand waits saved, per worker and per-worker environment', () => {
    const decoupled = [
      s({ env: 'docker', worker: 0, at: 0, tool: true, toolAt: 100, firstToolHand: 3000 }),
      s({ env: 'ssh', worker: 0, at: 4000, tool: true, toolAt: 4100, firstToolHand: 2000 }),
      s({ env: 'ssh', worker: 1, at: 500, tool: true, toolAt: 600, firstToolHand: 2000 }),
      s({ env: 'docker', worker: 1, at: 3000 }),
    ];
    expect(pooledTakes(o, decoupled)).toEqual([
      { at: 100, env: 'docker', kind: 'docker' },
      { at: 600, env: 'ssh-w1', kind: 'ssh' },
      { at: 1100, env: 'ssh-w0', kind: 'ssh' },
    ]);
    const sized = sizePools(o, decoupled);
    expect(sized.map((p) => [p.kind, p.size, p.demand, p.fixed])).toEqual([
      ['docker', 1, 1, false],
      ['ssh', 1, 1, false],
    ]);
    expect(sizePools(o, decoupled, 0)[0]!.note).toContain('SMALLER');
  });
});
