/**
 * A brain process: one session's harness, run in a child of the host. All it knows comes from
 * the log (`readEvents`), all it does goes through the host (`emit`, `execute`); when it dies,
 * the host starts another that continues from the log.
 */
import { builtinToolDefinitions } from './tool-definitions';
import { Harness, type BrainIO } from './harness';
import type { BrainOp, BrainRequests, BrainToHost, HostToBrain } from './ipc-protocol';
import { createAnthropicCaller } from './model';

const sessionId = process.argv[2];
if (!sessionId || !process.send) {
  console.error('corral brain: start me with fork(entry, [sessionId]) and an IPC channel');
  process.exit(2);
}

let nextId = 1;
const waiting = new Map<number, { resolve(v: unknown): void; reject(e: Error): void }>();
// A failed write means the host is gone; 'disconnect' below ends this process.
const send = (m: BrainToHost) => process.send!(m, undefined, undefined, () => {});

function request<Op extends BrainOp>(op: Op, args: BrainRequests[Op]['args'], signal?: AbortSignal): Promise<BrainRequests[Op]['result']> {
  const id = nextId++;
  return new Promise((resolve, reject) => {
    const cancel = () => send({ t: 'cancel', id });
    const settle = () => signal?.removeEventListener('abort', cancel);
    waiting.set(id, {
      resolve: (v) => (settle(), resolve(v as BrainRequests[Op]['result'])),
      reject: (e) => (settle(), reject(e)),
    });
    send({ t: 'req', id, op, args });
    signal?.addEventListener('abort', cancel, { once: true });
  });
}

let harness: Harness | undefined;
process.on('message', (raw: HostToBrain) => {
  if (raw.t === 'interrupt') return harness?.interrupt();
  if (raw.t === 'wake') return wake();
  if (raw.t !== 'res') return;
  const w = waiting.get(raw.id);
  if (!w) return;
  waiting.delete(raw.id);
  if (raw.ok) w.resolve(raw.value);
  else w.reject(new Error(raw.error));
});
// The host is gone: nothing this process holds matters, and a new host will wake a new brain.
process.on('disconnect', () => process.exit(0));

const io: BrainIO = {
  readEvents: (slice) => request('readEvents', { slice }),
  emit: (events, key) => request('emit', { events, key }),
  execute: (call, signal) => request('execute', call, signal),
  agent: () => request('agent', {}),
  hands: () => request('hands', {}),
  delta: (delta) => send({ t: 'delta', delta }),
  toolDefinitions: builtinToolDefinitions,
};

const num = (v: string | undefined, fallback: number) => (v && Number.isFinite(Number(v)) ? Number(v) : fallback);
harness = new Harness(io, createAnthropicCaller(), {
  maxRetries: num(process.env.CORRAL_MODEL_RETRIES, 4),
  retryBaseMs: num(process.env.CORRAL_RETRY_BASE_MS, 2000),
  retryMaxMs: num(process.env.CORRAL_RETRY_MAX_MS, 60_000),
});
// After a turn the process lingers a while, so the next message skips the start-up; the
// harness rereads the log on every run, so nothing it keeps matters for correctness.
const lingerMs = num(process.env.CORRAL_BRAIN_LINGER_MS, 30_000);
let running = false;
let again = false;
let lingerTimer: NodeJS.Timeout | undefined;

function wake(): void {
  if (running) {
    again = true;
    return;
  }
  clearTimeout(lingerTimer);
  running = true;
  again = false;
  harness!.run().then(
    () => {
      running = false;
      if (again) return wake();
      lingerTimer = setTimeout(() => process.exit(0), lingerMs);
    },
    (err) => {
      console.error(`corral brain ${sessionId}: ${err instanceof Error ? err.stack : String(err)}`);
      process.exit(1);
    },
  );
}
wake();
