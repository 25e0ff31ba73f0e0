import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Worker } from 'node:worker_threads';
import { spawnWorkerThread } from '../../../worker-thread';
import type { ToolOutcome } from '../../types';
import { InputError } from '../../tools/input';
import { PathError } from '../paths';
import type { OffLoopJob } from './jobs';
import { WorkerPool, type WorkerPoolStats } from './pool';

/**
 * The host's two lanes of worker threads, shared by every local hand: `search` for glob and grep
 * (long, abortable) and `text` for reading and editing large files (short, bounded), kept apart
 * so a few long searches never hold up another session's read.
 */

const here = path.dirname(fileURLToPath(import.meta.url));
/** Name of the built worker entry (electron.vite.config.ts builds it next to the host's code). */
export const BUILT_WORKER_FILE = 'local-hand-worker.js';
const IDLE_MS = 30_000;
/** A job that runs away with memory ends its worker, not the host. */
const WORKER_HEAP_MB = 2048;

/** A worker running off-loop/worker.ts: the TypeScript source under tsx, or the build. */
function spawnWorker(): Worker {
  return spawnWorkerThread(import.meta.url, path.join(here, 'worker.ts'), path.join(here, BUILT_WORKER_FILE), {
    resourceLimits: { maxOldGenerationSizeMb: WORKER_HEAP_MB },
  });
}

const lanes = {
  search: new WorkerPool({ name: 'search', spawn: spawnWorker, maxWorkers: Math.max(4, os.availableParallelism()), idleMs: IDLE_MS }),
  text: new WorkerPool({ name: 'file', spawn: spawnWorker, maxWorkers: 2, idleMs: IDLE_MS }),
};

export type Lane = keyof typeof lanes;

/**
 * Runs a job on a lane's worker. Rejects with the job's own InputError or PathError (rebuilt),
 * an Error carrying the errno `code` of a failed system call, or an AbortError when `signal`
 * aborts first (the worker is then terminated).
 */
export async function runOffLoop(lane: Lane, job: OffLoopJob, signal?: AbortSignal): Promise<ToolOutcome> {
  try {
    return (await lanes[lane].run(job, { signal })) as ToolOutcome;
  } catch (err) {
    const e = err as Error;
    if (e.name === 'InputError') throw new InputError(e.message);
    if (e.name === 'PathError') throw new PathError(e.message);
    throw e;
  }
}

/** What each lane is doing (tests check that an aborted search frees its worker). */
export function offLoopStats(): Record<Lane, WorkerPoolStats> {
  return { search: lanes.search.stats(), text: lanes.text.stats() };
}
