import type { HostToBrain } from './ipc-protocol';

type Message = Exclude<HostToBrain, { t: 'batch' } | { t: 'bind' }>;

/**
 * What the host sends one brain, written as few times as order allows: every write wakes the
 * brain, and on a busy or virtualised machine a wake-up costs from tens of microseconds to
 * milliseconds. The replies a batch earns leave in one message; those of a batch that started a
 * call wait for the next message (the call's reply, which the brain waits for anyway, or
 * anything sooner, such as a user's interrupt) and go first in it.
 */
export class BrainOutbox {
  /** Set while a batch is handled: what is sent meanwhile. */
  private collecting?: Message[];
  /** Replies waiting to ride with the next message. */
  private deferred?: Message[];

  /** `write` sends one message (throws if it cannot be serialised). */
  constructor(private readonly write: (message: HostToBrain) => void) {}

  send(message: Message): void {
    if (this.collecting) return void this.collecting.push(message);
    const out = this.deferred ? [...this.deferred, message] : [message];
    this.deferred = undefined;
    this.flush(out);
  }

  /**
   * Runs `handle` (a batch's messages) collecting what it sends; then sends that in one message,
   * or keeps it for the next one if `keep()` says so (a call the batch started still runs).
   */
  collect(handle: () => void, keep: () => boolean): void {
    const outer = this.collecting;
    this.collecting = [];
    try {
      handle();
    } finally {
      const out = this.collecting;
      this.collecting = outer;
      if (outer) outer.push(...out);
      else if (out.length && keep()) this.deferred = [...(this.deferred ?? []), ...out];
      else if (out.length) {
        const all = [...(this.deferred ?? []), ...out];
        this.deferred = undefined;
        this.flush(all);
      }
    }
  }

  private flush(out: Message[]): void {
    try {
      this.write(out.length === 1 ? out[0]! : { t: 'batch', messages: out });
    } catch (err) {
      // One of several could not be sent: each alone, so only that one is answered with the error.
      if (out.length > 1) for (const m of out) this.flush([m]);
      // The value cannot be sent (a brain that is gone fails later, in its exit handler).
      else if (out[0]!.t === 'res') this.flush([{ t: 'res', id: out[0]!.id, ok: false, error: `the reply could not be sent: ${errorText(err)}` }]);
    }
  }
}

/** An error's message (anything thrown, as text). */
export function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
