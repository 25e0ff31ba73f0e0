/**
 * The host's side of the sandbox runtime's thread (sandbox-runtime-worker.ts): one worker per
 * process, started at the first request, holding the process alive only while a request waits.
 * When the host process exits, the runtime gets to run its clean-up (bubblewrap's mount points,
 * its bridges' sockets) on its thread before the process is gone.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Worker } from 'node:worker_threads';
import { spawnWorkerThread } from '../../worker-thread';
import type { SandboxReply, SandboxRequest } from './sandbox-thread-protocol';

const here = path.dirname(fileURLToPath(import.meta.url));
/** Name of the built worker entry (electron.vite.config.ts builds it next to the host's code). */
export const BUILT_SANDBOX_WORKER_FILE = 'sandbox-runtime-worker.js';
/** The longest the host's exit waits for the runtime's clean-up. */
const EXIT_WAIT_MS = 2000;

type Pending = { resolve(value: unknown): void; reject(err: Error): void };
/** A request without its id (the thread gives it one). */
type Ask = SandboxRequest extends infer R ? (R extends { id: number } ? Omit<R, 'id'> : never) : never;

let worker: Worker | undefined;
let exited: Int32Array | undefined;
const pending = new Map<number, Pending>();
let nextId = 1;
let exitHookSet = false;
/** The runtime's configuration, once initialized: a thread started again (the last one failed) gets it first. */
let initAsk: Extract<Ask, { op: 'init' }> | undefined;

function start(): Worker {
  exited = new Int32Array(new SharedArrayBuffer(4));
  const w = spawnWorkerThread(import.meta.url, path.join(here, 'sandbox-runtime-worker.ts'), path.join(here, BUILT_SANDBOX_WORKER_FILE), { workerData: { exited } });
  w.unref();
  // Its reply (id 0) is nobody's: the requests after it wait for it on the thread.
  if (initAsk) w.postMessage({ ...initAsk, id: 0 } satisfies SandboxRequest);
  w.on('message', (r: SandboxReply) => {
    const p = pending.get(r.id);
    if (!p) return;
    pending.delete(r.id);
    if (pending.size === 0) w.unref();
    if (r.ok) p.resolve(r.value);
    else p.reject(new Error(r.error));
  });
  const gone = (why: string) => {
    if (worker !== w) return;
    worker = undefined;
    // The next request starts a new thread (and initializes the runtime there again).
    for (const p of pending.values()) p.reject(new Error(`the sandbox runtime's thread ${why}`));
    pending.clear();
  };
  w.on('error', (err) => gone(`failed: ${err.message}`));
  w.on('exit', (code) => gone(`stopped (exit code ${code})`));
  if (!exitHookSet) {
    exitHookSet = true;
    process.on('exit', () => {
      if (!worker || !exited) return;
      worker.postMessage({ op: 'exit' } satisfies SandboxRequest);
      Atomics.wait(exited, 0, 0, EXIT_WAIT_MS);
    });
  }
  return w;
}

/** Sends a request to the runtime's thread and waits for its reply; `signal` stops the wait (the thread is told). */
export function askSandboxThread<T>(ask: Ask, signal?: AbortSignal): Promise<T> {
  if (signal?.aborted) return Promise.reject(signal.reason instanceof Error ? signal.reason : new Error('aborted'));
  const w = (worker ??= start());
  if (ask.op === 'init') initAsk ??= ask;
  const id = nextId++;
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => {
      w.postMessage({ op: 'abort', id } satisfies SandboxRequest);
      pending.delete(id);
      if (pending.size === 0) w.unref();
      reject(signal!.reason instanceof Error ? signal!.reason : new Error('aborted'));
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    const done = () => signal?.removeEventListener('abort', onAbort);
    pending.set(id, { resolve: (v) => (done(), resolve(v as T)), reject: (e) => (done(), reject(e)) });
    w.ref();
    w.postMessage({ ...ask, id } as SandboxRequest);
  });
}

/** Tells the runtime's thread something that needs no reply. */
export function tellSandboxThread(message: Extract<SandboxRequest, { op: 'release' }>): void {
  worker?.postMessage(message);
}
