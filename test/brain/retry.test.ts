import { describe, expect, it } from 'vitest';
import { RETRY_AFTER_SPREAD_MAX_MS, RETRY_AFTER_SPREAD_MIN_MS, retryDelayMs } from '../../main/brain/retry';

const policy = { retryBaseMs: 2000, retryMaxMs: 60_000 };
/** Waits of many sessions failing at once, each with its own (here: evenly spread) random draw. */
const waits = (attempt: number, retryAfterMs?: number, n = 101) => Array.from({ length: n }, (_, i) => retryDelayMs(attempt, { retryAfterMs }, policy, () => i / (n - 1)));

describe('retry waits after 429 / 529', () => {
  it('with retry-after: never earlier than asked, spread over a small window above it', () => {
    for (const asked of [0, 300, 5_000, 30_000, 120_000]) {
      const w = waits(1, asked);
      const window = Math.min(Math.max(asked * 0.2, RETRY_AFTER_SPREAD_MIN_MS), RETRY_AFTER_SPREAD_MAX_MS);
      expect(Math.min(...w)).toBe(asked);
      expect(Math.max(...w)).toBe(Math.round(asked + window));
      // Sessions told the same thing do not come back together.
      expect(new Set(w).size).toBeGreaterThan(50);
    }
    // A server asking for more than 5 minutes gets 5 minutes (plus the spread).
    expect(Math.min(...waits(1, 3_600_000))).toBe(300_000);
  });

  it('without retry-after: exponential backoff with equal jitter (half to all of it), capped', () => {
    for (const attempt of [1, 2, 3, 4, 10]) {
      const full = Math.min(2000 * 2 ** (attempt - 1), 60_000);
      const w = waits(attempt);
      expect(Math.min(...w)).toBe(full / 2);
      expect(Math.max(...w)).toBe(full);
      expect(new Set(w).size).toBeGreaterThan(50);
    }
  });

  it('with the real random source, concurrent failures spread out', () => {
    const w = Array.from({ length: 200 }, () => retryDelayMs(1, { retryAfterMs: 10_000 }, policy));
    expect(Math.min(...w)).toBeGreaterThanOrEqual(10_000);
    expect(Math.max(...w)).toBeLessThanOrEqual(12_000);
    // 200 draws over a 2 s window: far from lock-step (at most a few share a millisecond).
    expect(new Set(w).size).toBeGreaterThan(150);
    expect(Math.max(...w) - Math.min(...w)).toBeGreaterThan(1_000);
  });
});
