import type { ModelFailure } from './model';

/** Retry policy of model requests. */
export interface RetryPolicy {
  maxRetries: number;
  retryBaseMs: number;
  retryMaxMs: number;
}

/** The longest `retry-after` honoured; a server asking for more gets this. */
export const MAX_RETRY_AFTER_MS = 5 * 60_000;
/** Sessions told the same `retry-after` spread over this fraction of it above it… */
export const RETRY_AFTER_SPREAD = 0.2;
/** …but over at least this and at most this many milliseconds. */
export const RETRY_AFTER_SPREAD_MIN_MS = 100;
export const RETRY_AFTER_SPREAD_MAX_MS = 10_000;

/**
 * How long to wait before retry number `attempt` (1-based) of a failed model request. Jittered,
 * so that sessions hit by the same limit at the same moment do not all come back together:
 *
 * - With the server's `retry-after`, never earlier than it asked: the wait is `retry-after` plus
 *   a random part of a small window above it (20% of it, at least 100 ms, at most 10 s).
 * - Without, exponential backoff with "equal jitter": between half and all of
 *   `min(base × 2^(attempt-1), max)`.
 */
export function retryDelayMs(attempt: number, failure: Pick<ModelFailure, 'retryAfterMs'>, policy: Omit<RetryPolicy, 'maxRetries'>, random: () => number = Math.random): number {
  if (failure.retryAfterMs !== undefined) {
    const asked = Math.min(Math.max(0, failure.retryAfterMs), MAX_RETRY_AFTER_MS);
    const window = Math.min(Math.max(asked * RETRY_AFTER_SPREAD, RETRY_AFTER_SPREAD_MIN_MS), RETRY_AFTER_SPREAD_MAX_MS);
    return Math.round(asked + random() * window);
  }
  const full = Math.min(policy.retryBaseMs * 2 ** (attempt - 1), policy.retryMaxMs);
  return Math.round(full / 2 + (random() * full) / 2);
}

/** Waits `ms` (a retry's wait), or less if `signal` aborts first; never rejects. */
export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done);
  });
}
