/**
 * `npm run bench:sandbox-start`: how long the host's event loop stalls while a sandboxed local
 * shell is prepared. The sandbox runtime works synchronously (sync spawns of `which`, a ripgrep
 * spawn, realpaths): it now runs on a thread of its own (hands/local/sandbox-thread.ts). Side by
 * side in one run, alternating:
 *
 * - before: the runtime on the host's own thread, as until then (loaded and started here, each
 *   command wrapped here);
 * - now: `wrap` through the runtime's thread.
 *
 * Then the first bash call of a new sandboxed local hand, and of an unsandboxed one (the cost of
 * spawning a shell from the host at all), with the loop's largest stall during each.
 * Figures: each case's p50 and max over BENCH_SANDBOX_RUNS runs (default 15).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { createLocalHand } from '../main/hands/local';
import { sandboxAvailability, wrap } from '../main/hands/local/sandbox';
import { fmt, percentile } from './stats';

const RUNS = Number(process.env.BENCH_SANDBOX_RUNS ?? 15);

/** Runs `work` while a 1 ms timer measures the loop: the work's time and the largest gap between ticks beyond 1 ms. */
async function stallOf(work: () => Promise<unknown>): Promise<{ ms: number; stall: number }> {
  let last = performance.now();
  let stall = 0;
  const tick = setInterval(() => {
    const t = performance.now();
    stall = Math.max(stall, t - last - 1);
    last = t;
  }, 1);
  await new Promise((r) => setTimeout(r, 20));
  stall = 0;
  last = performance.now();
  const t0 = performance.now();
  await work();
  const ms = performance.now() - t0;
  await new Promise((r) => setTimeout(r, 5));
  clearInterval(tick);
  return { ms, stall };
}

const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'corral-bench-sandbox-'));
const policy = { denyRead: [], allowedHosts: [] };
const rows: [string, { ms: number; stall: number }[]][] = [];

const nowStart = await stallOf(async () => {
  const a = await sandboxAvailability();
  if (!a.ok) throw new Error(`no sandbox here: ${a.reason}`);
});
// The runtime as the host ran it before: loaded, checked and started on this thread.
const { SandboxManager } = await import('@anthropic-ai/sandbox-runtime');
const beforeStart = await stallOf(async () => {
  SandboxManager.checkDependencies();
  await SandboxManager.initialize({ network: { allowedDomains: [], deniedDomains: [] }, filesystem: { denyRead: [], allowWrite: [], denyWrite: [] }, mandatoryDenySearchDepth: 1 });
});
rows.push(['start: the runtime checked and started, before (host thread)', [beforeStart]], ['start: sandboxAvailability() now (its thread, and a real run)', [nowStart]]);

const before: { ms: number; stall: number }[] = [];
const now: { ms: number; stall: number }[] = [];
for (let i = 0; i < RUNS; i++) {
  before.push(
    await stallOf(async () => {
      await SandboxManager.wrapWithSandboxArgv('true', 'bash', { filesystem: { denyRead: [], allowRead: [scratch], allowWrite: [scratch], denyWrite: [] } }, undefined, scratch);
      SandboxManager.cleanupAfterCommand();
    }),
  );
  now.push(
    await stallOf(async () => {
      const w = await wrap('true', { workDir: scratch, tmpDir: scratch, policy });
      w.release();
    }),
  );
}
rows.push(['wrap one command, before (host thread)', before], ['wrap one command, now (its thread)', now]);

for (const sandboxed of [true, false]) {
  const firstCalls: { ms: number; stall: number }[] = [];
  for (let i = 0; i < RUNS; i++) {
    const dir = fs.mkdtempSync(path.join(scratch, 'hand-'));
    const hand = createLocalHand({ workDir: dir, ...(sandboxed ? {} : { sandbox: false as const }) });
    await hand.sandboxState();
    firstCalls.push(await stallOf(() => hand.execute('bash', { command: 'true' })));
    await hand.dispose();
  }
  rows.push([`a new local hand's first bash call, ${sandboxed ? 'sandboxed (now)' : 'unsandboxed (spawn floor)'}`, firstCalls]);
}

const cell = (xs: number[]) => `${fmt(percentile(xs, 50), 1)} / ${fmt(Math.max(...xs), 1)}`.padStart(16);
console.log(`${''.padEnd(72)}${'time p50 / max'.padStart(16)}${'loop stall p50 / max'.padStart(24)}  (ms; ${RUNS} runs)`);
for (const [name, xs] of rows) console.log(`${name.padEnd(72)}${cell(xs.map((x) => x.ms))}${cell(xs.map((x) => x.stall)).padStart(24)}`);
fs.rmSync(scratch, { recursive: true, force: true });
process.exit(0);
