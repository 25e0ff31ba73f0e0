/**
 * A small counting semaphore for SSH channels (sshd caps sessions per connection). Waiting can
 * be cut short by an abort signal or by the connection going away.
 */
export class ChannelSlots {
  private free: number;
  private readonly waiting: { grant: (release: (() => void) | undefined) => void }[] = [];

  constructor(size: number) {
    this.free = size;
  }

  /** A release function, or undefined when the signal aborted (or drain() ran) first. */
  acquire(signal?: AbortSignal): Promise<(() => void) | undefined> {
    if (this.free > 0) {
      this.free--;
      return Promise.resolve(this.releaser());
    }
    return new Promise((resolve) => {
      const entry = {
        grant: (release: (() => void) | undefined) => {
          signal?.removeEventListener('abort', onAbort);
          resolve(release);
        },
      };
      const onAbort = () => {
        const i = this.waiting.indexOf(entry);
        if (i >= 0) this.waiting.splice(i, 1);
        resolve(undefined);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiting.push(entry);
    });
  }

  /** Lets every waiter go empty-handed (the connection is gone). */
  drain(): void {
    for (const w of this.waiting.splice(0)) w.grant(undefined);
  }

  private releaser(): () => void {
    let done = false;
    return () => {
      if (done) return;
      done = true;
      const next = this.waiting.shift();
      if (next) next.grant(this.releaser());
      else this.free++;
    };
  }
}
