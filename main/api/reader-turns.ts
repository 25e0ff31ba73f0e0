import { performance } from 'node:perf_hooks';

/** Milliseconds of reading a turn of the event loop may spend before readers wait for the next. */
const TURN_BUDGET_MS = 4;

/**
 * Turns on the host's event loop for readers that replay the log to a client (SSE streams, UI
 * watches): reading a page (up to 4 MiB events) and handing it to the socket is a few
 * milliseconds of synchronous work, and two hundred readers woken together did it all in one
 * turn, holding every session's tool round trip and every API call for a quarter of a second.
 * A reader's work runs at once while the current turn has spent less than its budget on
 * readers; otherwise it waits, in order, for a later turn. So a turn spends at most the budget
 * plus one page on readers, and a reader that keeps up (one small event at a time) pays nothing.
 */
export class ReaderTurns {
  private spent = 0;
  private resetQueued = false;
  private readonly waiting: (() => void)[] = [];

  constructor(private readonly budgetMs = TURN_BUDGET_MS) {}

  /** Runs `work` in this turn if the budget allows, else in a later one; its result, or its error. */
  run<T>(work: () => T): Promise<T> {
    if (this.waiting.length === 0 && this.spent < this.budgetMs) {
      try {
        return Promise.resolve(this.timed(work));
      } catch (err) {
        return Promise.reject(err as Error);
      }
    }
    return new Promise<T>((resolve, reject) => {
      this.waiting.push(() => {
        try {
          resolve(this.timed(work));
        } catch (err) {
          reject(err as Error);
        }
      });
      this.queueReset();
    });
  }

  /** Readers waiting for a turn (for tests). */
  get queued(): number {
    return this.waiting.length;
  }

  private timed<T>(work: () => T): T {
    const t0 = performance.now();
    try {
      return work();
    } finally {
      this.spent += performance.now() - t0;
      this.queueReset();
    }
  }

  /** At the loop's next check phase a new turn starts: its budget is whole, waiters go first. */
  private queueReset(): void {
    if (this.resetQueued) return;
    this.resetQueued = true;
    setImmediate(() => {
      this.resetQueued = false;
      this.spent = 0;
      // At least one waiter per turn, however long it takes.
      while (this.waiting.length > 0) {
        this.waiting.shift()!();
        if (this.spent >= this.budgetMs) break;
      }
    });
  }
}

/** The host's one set of turns: every reader in the process shares its event loop. */
export const readerTurns = new ReaderTurns();
