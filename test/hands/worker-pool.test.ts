import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { WorkerPool } from '../../main/hands/local/off-loop/pool';

/** A worker that answers {wait: ms} after ms, spins for ever on {spin}, and exits on {exit}. */
const WORKER = `
const { parentPort } = require('node:worker_threads');
parentPort.on('message', (job) => {
  if (job.exit) process.exit(3);
  if (job.spin) for (;;);
  if (job.fail) return parentPort.postMessage({ ok: false, error: { name: 'InputError', message: job.fail, code: 'EX' } });
  setTimeout(() => parentPort.postMessage({ ok: true, value: job.wait }), job.wait);
});`;

let spawned = 0;
// Idle workers end after idleMs (and never keep the process alive meanwhile).
const newPool = (maxWorkers: number) => {
  spawned = 0;
  return new WorkerPool({ name: 'test', maxWorkers, idleMs: 2_000, spawn: () => (spawned++, new Worker(WORKER, { eval: true })) });
};
const until = async (check: () => boolean) => {
  for (let i = 0; i < 500 && !check(); i++) await new Promise((r) => setTimeout(r, 10));
  expect(check()).toBe(true);
};

describe('WorkerPool', () => {
  it('runs at most maxWorkers jobs at once, queues the rest in order, and reuses idle workers', async () => {
    const p = newPool(2);
    const jobs = [60, 40, 10, 20].map((wait) => p.run({ wait }));
    expect(p.stats()).toMatchObject({ busy: 2, queued: 2 });
    expect(await Promise.all(jobs)).toEqual([60, 40, 10, 20]);
    expect(spawned).toBe(2);
    expect(p.stats()).toMatchObject({ busy: 0, idle: 2, queued: 0 });
    await p.run({ wait: 1 });
    expect(spawned).toBe(2);

    // One worker: jobs finish in the order they came, whatever they take.
    const single = newPool(1);
    const order: number[] = [];
    await Promise.all([30, 1, 10].map((wait) => single.run({ wait }).then((v) => order.push(v as number))));
    expect(order).toEqual([30, 1, 10]);
    expect(spawned).toBe(1);
  });

  it('aborts a running job by terminating its worker, and a queued one by taking it out of line', async () => {
    const p = newPool(1);
    const running = new AbortController();
    const queued = new AbortController();
    const spin = p.run({ spin: true }, { signal: running.signal });
    const waiting = p.run({ wait: 1 }, { signal: queued.signal });
    const after = p.run({ wait: 5 });
    expect(p.stats()).toMatchObject({ busy: 1, queued: 2 });
    queued.abort();
    await expect(waiting).rejects.toMatchObject({ name: 'AbortError' });
    expect(p.stats()).toMatchObject({ busy: 1, queued: 1 });
    running.abort();
    await expect(spin).rejects.toMatchObject({ name: 'AbortError' });
    // The next job gets a fresh worker; the spinning one is terminated.
    await expect(after).resolves.toBe(5);
    await until(() => p.stats().stopping === 0);
    expect(spawned).toBe(2);
    await expect(p.run({ wait: 1 }, { signal: AbortSignal.abort() })).rejects.toMatchObject({ name: 'AbortError' });
  });

  it('passes a job error through with its name and code, and survives a worker that exits', async () => {
    const p = newPool(1);
    await expect(p.run({ fail: 'bad input' })).rejects.toMatchObject({ name: 'InputError', message: 'bad input', code: 'EX' });
    await expect(p.run({ exit: true })).rejects.toThrow(/the test worker stopped \(exit code 3\)/);
    await expect(p.run({ wait: 2 })).resolves.toBe(2);
    expect(p.stats()).toMatchObject({ busy: 0, idle: 1 });
  });
});
