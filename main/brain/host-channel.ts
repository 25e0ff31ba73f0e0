import type { BrainOp, BrainRequests, BrainToHost, HostToBrain } from './ipc-protocol';

/** The brain's end of the wire: typed requests to the host, matched with their replies. */
export interface HostChannel {
  request<Op extends BrainOp>(op: Op, args: BrainRequests[Op]['args'], signal?: AbortSignal): Promise<BrainRequests[Op]['result']>;
  /** A message that needs no reply (live text, going idle). */
  notify(message: Exclude<BrainToHost, { t: 'req' }>): void;
  /** Takes a reply from the host. */
  settle(reply: Extract<HostToBrain, { t: 'res' }>): void;
}

export function createHostChannel(send: (m: BrainToHost) => void): HostChannel {
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
        send({ t: 'req', id, op, args } as BrainToHost);
        signal?.addEventListener('abort', cancel, { once: true });
      });
    },
    notify: send,
    settle(reply) {
      const w = waiting.get(reply.id);
      if (!w) return;
      waiting.delete(reply.id);
      if (reply.ok) w.resolve(reply.value);
      else w.reject(new Error(reply.error));
    },
  };
}
