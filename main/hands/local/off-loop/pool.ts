import { Worker } from 'node:worker_threads';

/**
 * A small pool of worker threads that run jobs off the host's event loop. One job per worker at
 * a time; jobs beyond `maxWorkers` wait in line. Aborting a job that runs terminates its worker
 * (V8 stops it even inside a runaway regular expression), so an interrupt frees the thread at
 * once; an idle worker is kept for reuse for `idleMs`, then ended.
 */

/** How a pool starts its workers and how many it runs. */
export interface WorkerPoolOptions {
  /** For error messages: "the search worker …". */
  name: string;
  /** Starts one worker thread (already loading the job runner). */
  spawn: () => Worker;
  /** At most this many jobs run at once; later ones wait. */
  maxWorkers: number;
  /** An idle worker is ended after this long without a job. */
  idleMs: number;
}

/** What a pool is doing, for tests and diagnostics. */
export interface WorkerPoolStats {
  /** Workers running a job. */
  busy: number;
  /** Workers waiting for one. */
  idle: number;
  /** Jobs waiting for a worker. */
  queued: number;
  /** Workers terminated (after an abort or a failure) that have not exited yet. */
  stopping: number;
}

/** What a worker posts back for one job. */
export type JobReply = { ok: true; value: unknown } | { ok: false; error: { name: string; message: string; code?: string } };

/** Rejection of a job whose signal was aborted. */
export class JobAbortedError extends Error {
  override readonly name = 'AbortError';
}

interface Task {
  job: unknown;
  resolve(value: unknown): void;
  reject(err: Error): void;
  cleanup(): void;
}

interface Slot {
  worker: Worker;
  task?: Task;
  idleTimer?: NodeJS.Timeout;
}

export class WorkerPool {
  private readonly idle: Slot[] = [];
  private readonly busy = new Set<Slot>();
  private readonly queue: Task[] = [];
  private stopping = 0;

  constructor(private readonly opts: WorkerPoolOptions) {}

  /** Runs `job` on a worker; rejects with JobAbortedError when `signal` aborts first. */
  run(job: unknown, opts: { signal?: AbortSignal } = {}): Promise<unknown> {
    const { signal } = opts;
    if (signal?.aborted) return Promise.reject(new JobAbortedError('aborted before it started'));
    return new Promise((resolve, reject) => {
      const task: Task = { job, resolve, reject, cleanup: () => {} };
      if (signal) {
        const onAbort = () => this.abort(task);
        signal.addEventListener('abort', onAbort, { once: true });
        task.cleanup = () => signal.removeEventListener('abort', onAbort);
      }
      this.queue.push(task);
      this.pump();
    });
  }

  stats(): WorkerPoolStats {
    return { busy: this.busy.size, idle: this.idle.length, queued: this.queue.length, stopping: this.stopping };
  }

  /** Starts queued jobs while there are workers to run them. */
  private pump(): void {
    while (this.queue.length > 0 && this.busy.size < this.opts.maxWorkers) {
      const task = this.queue.shift()!;
      const slot = this.idle.pop() ?? this.start();
      clearTimeout(slot.idleTimer);
      slot.task = task;
      this.busy.add(slot);
      // A worker with a job keeps the process alive until it answers; an idle one does not.
      slot.worker.ref();
      slot.worker.postMessage(task.job);
    }
  }

  private start(): Slot {
    const slot: Slot = { worker: this.opts.spawn() };
    slot.worker.on('message', (reply: JobReply) => {
      const task = slot.task;
      if (!task) return;
      this.release(slot);
      if (reply.ok) task.resolve(reply.value);
      else task.reject(Object.assign(new Error(reply.error.message), { name: reply.error.name, code: reply.error.code }));
    });
    // An uncaught error or running out of memory ends only the worker: its job fails.
    slot.worker.on('error', (err) => this.fail(slot, `the ${this.opts.name} worker failed: ${err.message}`));
    slot.worker.on('exit', (code) => this.fail(slot, `the ${this.opts.name} worker stopped (exit code ${code})`));
    return slot;
  }

  /** The worker answered: back to the idle list (or ended after a while), and the next job. */
  private release(slot: Slot): void {
    slot.task?.cleanup();
    slot.task = undefined;
    this.busy.delete(slot);
    slot.worker.unref();
    slot.idleTimer = setTimeout(() => this.end(slot), this.opts.idleMs);
    slot.idleTimer.unref();
    this.idle.push(slot);
    this.pump();
  }

  /** A worker died or errored: its job (if any) fails and the slot is dropped. */
  private fail(slot: Slot, message: string): void {
    const task = slot.task;
    this.drop(slot);
    if (task) {
      task.cleanup();
      task.reject(new Error(message));
    }
    this.pump();
  }

  private abort(task: Task): void {
    const queued = this.queue.indexOf(task);
    if (queued !== -1) {
      this.queue.splice(queued, 1);
    } else {
      const slot = [...this.busy].find((s) => s.task === task);
      if (!slot) return; // Already answered.
      this.end(slot);
    }
    task.cleanup();
    task.reject(new JobAbortedError('aborted'));
    this.pump();
  }

  /** Terminates a worker; its exit is awaited in the background (counted as stopping). */
  private end(slot: Slot): void {
    this.drop(slot);
    this.stopping++;
    void slot.worker.terminate().finally(() => this.stopping--);
  }

  private drop(slot: Slot): void {
    clearTimeout(slot.idleTimer);
    slot.worker.removeAllListeners('message');
    slot.worker.removeAllListeners('exit');
    // Keep an 'error' listener: one raised while terminating must not become uncaught.
    slot.worker.removeAllListeners('error');
    slot.worker.on('error', () => {});
    slot.task = undefined;
    this.busy.delete(slot);
    const i = this.idle.indexOf(slot);
    if (i !== -1) this.idle.splice(i, 1);
  }
}
