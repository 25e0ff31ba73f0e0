/**
 * Whether the hand is still there: the lost reason, the onLost listeners, and the calls in
 * flight, which all settle the moment the hand is lost (none waits on a dead engine).
 */
export class Lifeline {
  private reason: string | undefined;
  private closed = false;
  private readonly listeners: ((reason: string) => void)[] = [];
  private readonly waiters = new Set<(reason: string) => void>();

  get lostReason(): string | undefined {
    return this.reason;
  }

  /** Calls running now. */
  get inFlight(): number {
    return this.waiters.size;
  }

  onLost(listener: (reason: string) => void): void {
    if (this.reason !== undefined) {
      if (!this.closed) queueMicrotask(() => listener(this.reason!));
      return;
    }
    this.listeners.push(listener);
  }

  /** The hand is gone; the first reason wins. Listeners are told unless the hand was closed on purpose. */
  markLost(reason: string): void {
    if (this.reason !== undefined) return;
    this.reason = reason;
    for (const w of [...this.waiters]) w(reason);
    this.waiters.clear();
    if (this.closed) return;
    for (const l of this.listeners.splice(0)) {
      try {
        l(reason);
      } catch {
        // A listener's failure is its own.
      }
    }
  }

  /** Closed on purpose: calls in flight end as lost, listeners are not told. */
  markClosed(): void {
    this.closed = true;
    this.markLost('the hand was closed');
  }

  /** Resolves when the hand is lost or after `ms`, whichever comes first. */
  lostWithin(ms: number): Promise<void> {
    if (this.reason !== undefined) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.waiters.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.waiters.add(done);
    });
  }

  /**
   * Runs `work` as a call in flight: settles with its result, or with `onLost(reason)` as soon as
   * the hand is lost (and then calls `cancel`).
   */
  async guard<T>(work: Promise<T>, onLost: (reason: string) => T, cancel: () => void): Promise<T> {
    if (this.reason !== undefined) {
      cancel();
      return onLost(this.reason);
    }
    let waiter!: (reason: string) => void;
    const lost = new Promise<T>((resolve) => {
      waiter = (reason) => {
        cancel();
        resolve(onLost(reason));
      };
    });
    this.waiters.add(waiter);
    try {
      return await Promise.race([work, lost]);
    } finally {
      this.waiters.delete(waiter);
    }
  }
}
