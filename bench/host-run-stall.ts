/**
 * `npm run bench:host-run`: what the host's event loop waits while it runs programs here (git, as
 * a pool refill's ls-remote does), started by the launcher against spawned by the host itself,
 * alternating in one run: loop delay max and p99, and the time per run.
 */
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { runProgram } from '../main/launcher/run-program';
const env = { PATH: process.env.PATH };
const RUNS = Number(process.env.BENCH_RUNS ?? 20);
async function round(via: 'launcher' | 'direct') {
  const h = monitorEventLoopDelay({ resolution: 1 });
  h.enable();
  const t = performance.now();
  for (let i = 0; i < RUNS; i++) await runProgram('git', ['--version'], { env, via, onStdout() {}, onStderr() {} }).done;
  const ms = performance.now() - t;
  h.disable();
  return { via, max: h.max / 1e6, p99: h.percentile(99) / 1e6, perRun: ms / RUNS };
}
// The launcher's own start (once per host) is not what is measured.
await round('launcher');
for (let k = 0; k < 3; k++) for (const via of ['direct', 'launcher'] as const) { const r = await round(via); console.log(`${r.via.padEnd(9)} loop delay max ${r.max.toFixed(1)} ms p99 ${r.p99.toFixed(1)} ms, ${r.perRun.toFixed(1)} ms per run`); }
process.exit(0);
