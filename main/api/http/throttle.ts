/**
 * Failed-credential throttling per client address and credential kind: after
 * {@link FREE_FAILURES} wrong credentials of one kind, the address is refused for that kind
 * (429 with retry-after) for a delay that doubles with each further failure, up to
 * {@link MAX_DELAY_MS}. While blocked, nothing of that kind it presents is checked — a right
 * guess gets 429 too, so guessing gains nothing (auth-guard.ts lets one exception through: a
 * connection that already proved the key). Memory is bounded: the oldest entries go first.
 *
 * Every local process shares 127.0.0.1, so the count is shared by whoever connects from there:
 * - Kinds are counted apart (auth-guard.ts): wrong API keys do not hold back link codes, and
 *   the reverse.
 * - A success does not clear the count. It used to, and then any client that succeeded now and
 *   then (the user's own script) reset a guesser on the same address every few tries: unlimited
 *   tries. A count is forgotten instead after {@link FORGET_AFTER_MS} without a failure.
 */

export const FREE_FAILURES = 10;
export const MAX_DELAY_MS = 60_000;
/** A count with no failure for this long starts again from zero. */
export const FORGET_AFTER_MS = 15 * 60_000;
const MAX_CLIENTS = 10_000;

interface Entry {
  failures: number;
  blockedUntil: number;
  lastFailure: number;
}

/** Failure counts per key (the guard's key is the credential kind and the address). */
export class FailureThrottle {
  private readonly clients = new Map<string, Entry>();

  constructor(private readonly now: () => number = Date.now) {}

  /** Seconds the key must wait before it may try again; 0 when it may try now. */
  retryAfter(key: string): number {
    const e = this.clients.get(key);
    if (!e) return 0;
    const wait = e.blockedUntil - this.now();
    return wait > 0 ? Math.ceil(wait / 1000) : 0;
  }

  /** Records a failure; returns the seconds the key is now blocked for (0: not blocked). */
  fail(key: string): number {
    const now = this.now();
    const old = this.clients.get(key);
    const e = old && now - old.lastFailure < FORGET_AFTER_MS ? old : { failures: 0, blockedUntil: 0, lastFailure: now };
    this.clients.delete(key);
    e.failures += 1;
    e.lastFailure = now;
    if (e.failures >= FREE_FAILURES) {
      const delay = Math.min(MAX_DELAY_MS, 1000 * 2 ** (e.failures - FREE_FAILURES));
      e.blockedUntil = now + delay;
    }
    // Re-inserted: the most recently failing key is the last to be evicted.
    this.clients.set(key, e);
    if (this.clients.size > MAX_CLIENTS) this.clients.delete(this.clients.keys().next().value!);
    return this.retryAfter(key);
  }

  /** Number of keys tracked (tests check the bound). */
  get size(): number {
    return this.clients.size;
  }
}
