import type { BrainOp, BrainRequest, BrainRequests, BrainToHost, HostToBrain } from './ipc-protocol';

/** The brain's end of the wire: typed requests to the host, matched with their replies. */
export interface HostChannel {
  request<Op extends BrainOp>(op: Op, args: BrainRequests[Op]['args'], signal?: AbortSignal): Promise<BrainRequests[Op]['result']>;
  /** A message that needs no reply (live text, going idle). */
  notify(message: Exclude<BrainToHost, { t: 'req' } | { t: 'batch' }>): void;
  /** Takes a reply from the host. */
  settle(reply: Extract<HostToBrain, { t: 'res' }>): void;
  /** Sends what is queued now rather than at the end of the tick (unless held). */
  flush(): void;
  /**
   * Keeps what is sent from now on in the outbox until the returned release is called (each
   * hold once; they then leave together at the end of that tick). For messages whose reply
   * is not awaited meanwhile: a held request is not answered until it is released.
   */
  hold(): () => void;
  /** Resolves once everything sent so far has been written (before the process leaves). */
  sent(): Promise<void>;
}

/**
 * Messages sent in one go (a step's append and the call it leads to) leave together, in order,
 * in one write: the host gets them in one wake-up. They go at the end of the current tick,
 * before any I/O the same code started, unless held (see `hold`).
 * `write` calls its callback once the message is written (or failed: the host is gone).
 */
export function createHostChannel(write: (m: BrainToHost, done: () => void) => void): HostChannel {
  let outbox: Exclude<BrainToHost, { t: 'batch' }>[] = [];
  let writing = 0;
  const idle: (() => void)[] = [];
  let holds = 0;
  const written = () => {
    writing -= 1;
    if (writing === 0 && outbox.length === 0) for (const f of idle.splice(0)) f();
  };
  const flush = () => {
    if (outbox.length === 0 || holds > 0) return;
    const out = outbox;
    outbox = [];
    writing += 1;
    write(out.length === 1 ? out[0]! : { t: 'batch', messages: out }, written);
  };
  const send = (m: Exclude<BrainToHost, { t: 'batch' }>) => {
    outbox.push(m);
    if (outbox.length === 1 && holds === 0) process.nextTick(flush);
  };
  const hold = () => {
    holds += 1;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      holds -= 1;
      if (holds === 0 && outbox.length > 0) process.nextTick(flush);
    };
  };
  let nextId = 1;
  const waiting = new Map<number, { resolve(v: unknown): void; reject(e: Error): void }>();
  return {
    request(op, args, signal) {
      const id = nextId++;
      return new Promise((resolve, reject) => {
        // Aborting asks the host to stop the call; its reply still settles the request.
        const cancel = () => send({ t: 'cancel', id });
        const done = () => signal?.removeEventListener('abort', cancel);
        waiting.set(id, {
          resolve: (v) => (done(), resolve(v as never)),
          reject: (e) => (done(), reject(e)),
        });
        send({ t: 'req', id, op, args } as BrainRequest);
        signal?.addEventListener('abort', cancel, { once: true });
      });
    },
    notify: send,
    flush,
    hold,
    settle(reply) {
      const w = waiting.get(reply.id);
      if (!w) return;
      waiting.delete(reply.id);
      if (reply.ok) w.resolve(reply.value);
      else w.reject(new Error(reply.error));
    },
    sent: () => (writing === 0 && outbox.length === 0 ? Promise.resolve() : new Promise((resolve) => idle.push(resolve))),
  };
}
