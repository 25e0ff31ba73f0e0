/**
 * Failed-credential throttling per client address: after {@link FREE_FAILURES} wrong keys,
 * codes or cookies in a row, the address is refused (429 with retry-after) for a delay that
 * doubles with each further failure, up to {@link MAX_DELAY_MS}. While blocked, nothing it
 * presents is checked — a right guess gets 429 too, so guessing gains nothing. A success
 * clears the address. Memory is bounded: the oldest entries go first.
 */

export const FREE_FAILURES = 10;
export const MAX_DELAY_MS = 60_000;
const MAX_CLIENTS = 10_000;

interface Entry {
  failures: number;
  blockedUntil: number;
}

/** Per-address failure counts. */
export class FailureThrottle {
  private readonly clients = new Map<string, Entry>();

  constructor(private readonly now: () => number = Date.now) {}

  /** Seconds the address must wait before it may try again; 0 when it may try now. */
  retryAfter(address: string): number {
    const e = this.clients.get(address);
    if (!e) return 0;
    const wait = e.blockedUntil - this.now();
    return wait > 0 ? Math.ceil(wait / 1000) : 0;
  }

  /** Records a failure; returns the seconds the address is now blocked for (0: not blocked). */
  fail(address: string): number {
    const e = this.clients.get(address) ?? { failures: 0, blockedUntil: 0 };
    this.clients.delete(address);
    e.failures += 1;
    if (e.failures >= FREE_FAILURES) {
      const delay = Math.min(MAX_DELAY_MS, 1000 * 2 ** (e.failures - FREE_FAILURES));
      e.blockedUntil = this.now() + delay;
    }
    // Re-inserted: the most recently failing address is the last to be evicted.
    this.clients.set(address, e);
    if (this.clients.size > MAX_CLIENTS) this.clients.delete(this.clients.keys().next().value!);
    return this.retryAfter(address);
  }

  /** A success: the address starts afresh. */
  succeed(address: string): void {
    this.clients.delete(address);
  }

  /** Number of addresses tracked (tests check the bound). */
  get size(): number {
    return this.clients.size;
  }
}
