/**
 * Entry of a worker thread that runs the local hand's large jobs (glob, grep, reading and
 * editing big files) off the host's event loop. One job at a time: a message in, a reply out.
 */
import os from 'node:os';
import { parentPort } from 'node:worker_threads';
import { InputError } from '../../tools/input';
import { PathError } from '../paths';
import type { JobReply } from './pool';
import { runJob, type OffLoopJob } from './jobs';

/** A little below the host, as brains are: with the CPU busy, the host's loop keeps its turn. */
const WORKER_NICENESS = 5;

// On Linux, setpriority(PRIO_PROCESS, 0) changes the calling thread only; elsewhere it would
// lower the whole host, so leave it.
if (process.platform === 'linux') {
  try {
    os.setPriority(0, WORKER_NICENESS);
  } catch {
    // Not permitted: same priority as the host.
  }
}

const port = parentPort;
if (!port) throw new Error('off-loop/worker.ts runs as a worker thread');
port.on('message', (job: OffLoopJob) => {
  let reply: JobReply;
  try {
    reply = { ok: true, value: runJob(job) };
  } catch (err) {
    const e = err instanceof Error ? err : new Error(String(err));
    const code = (e as NodeJS.ErrnoException).code;
    // Named explicitly (not by constructor name, which a bundler may change) so the host can rebuild them.
    const name = e instanceof InputError ? 'InputError' : e instanceof PathError ? 'PathError' : e.name;
    reply = { ok: false, error: { name, message: e.message, ...(typeof code === 'string' ? { code } : {}) } };
  }
  port.postMessage(reply);
});
