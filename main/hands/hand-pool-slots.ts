/**
 * How many pooled hands are made at once, across every environment's pool. Making one (a
 * container started or a host connected, a repository unpacked) costs the machine a few seconds
 * of CPU and disk; refills made all at once after a burst of takes swamped a 2-core machine
 * (load 13 with pools of 7) and slowed the very sessions the pool serves. So refills take turns:
 * at most `limit` at a time, the emptiest pool's first, and none starts within `quietMs` of a
 * hand being taken (its session is then in its first tool call, the moment the pool is for),
 * unless takes have kept a free turn unused for MAX_QUIET_WAITS times that (takes that never
 * pause must not starve the pool).
 */
const MAX_QUIET_WAITS = 5;

export class RefillSlots {
  private running = 0;
  private lastTake = 0;
  private timer?: NodeJS.Timeout;
  private readonly waiting: { rank: () => number; seq: number; go: (ok: boolean) => void }[] = [];
  /** Since when a turn was free and refills waited only for the quiet after takes. */
  private heldSince?: number;
  private seq = 0;

  constructor(
    private readonly limit: number,
    private readonly quietMs: number,
  ) {}

  /** Refills running now. */
  get active(): number {
    return this.running;
  }

  /**
   * Waits for a turn: true when it may start (call `release` when done), false when the pool
   * stopped first. `rank`: lower goes first (read when a turn comes up: the emptiest pool then).
   */
  acquire(rank: () => number): Promise<boolean> {
    return new Promise((go) => {
      this.waiting.push({ rank, seq: this.seq++, go });
      this.next();
    });
  }

  /** A refill ended: the next may start. */
  release(): void {
    this.running -= 1;
    this.next();
  }

  /** A hand was just taken: refills wait until its session's first call has had the machine. */
  taken(): void {
    this.lastTake = Date.now();
  }

  /** Refills not started are dropped (their acquire resolves false). */
  stop(): void {
    clearTimeout(this.timer);
    for (const w of this.waiting.splice(0)) w.go(false);
  }

  private next(): void {
    while (this.running < this.limit && this.waiting.length > 0) {
      const now = Date.now();
      this.heldSince ??= now;
      const quiet = Math.min(this.lastTake + this.quietMs, this.heldSince + MAX_QUIET_WAITS * this.quietMs) - now;
      if (quiet > 0) {
        clearTimeout(this.timer);
        this.timer = setTimeout(() => this.next(), quiet);
        this.timer.unref();
        return;
      }
      let best = 0;
      for (let i = 1; i < this.waiting.length; i++) {
        const a = this.waiting[i]!;
        const b = this.waiting[best]!;
        const ra = a.rank();
        const rb = b.rank();
        if (ra < rb || (ra === rb && a.seq < b.seq)) best = i;
      }
      const [w] = this.waiting.splice(best, 1);
      this.heldSince = undefined;
      this.running += 1;
      w!.go(true);
    }
  }
}
