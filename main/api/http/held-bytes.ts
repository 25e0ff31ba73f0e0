/**
 * A server-wide budget for what readers keep in memory while their clients are not taking it.
 * A reader waiting on a slow client keeps the events it has read only if they fit; otherwise it
 * lets them go and reads them again from the log once the client has taken what was sent. So
 * a thousand paused clients cost this budget plus each one's small send buffer, not a thousand
 * copies of the events they are behind on.
 */
export class HeldBytes {
  private used = 0;

  constructor(readonly limit: number) {}

  /** Takes `n` bytes of the budget if they fit: returns the function that gives them back. */
  take(n: number): (() => void) | undefined {
    if (this.used + n > this.limit) return undefined;
    this.used += n;
    let given = false;
    return () => {
      if (given) return;
      given = true;
      this.used -= n;
    };
  }

  /** Bytes taken now. */
  get inUse(): number {
    return this.used;
  }
}
