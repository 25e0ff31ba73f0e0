/**
 * `npm run bench:brain-start`: what starting brains costs the host's event loop, with brains
 * forked by the host and with brains started by the launcher (brain-launcher.ts), alternating in
 * one run. Each round fills a pool of BENCH_BRAINS brains (the built entry) and waits until all
 * are ready; it prints the time the fill held the loop (synchronous) and the loop's delay p99/max
 * while they started (monitorEventLoopDelay, 1 ms resolution), p50 over BENCH_ROUNDS rounds a mode.
 */
import os from 'node:os';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { BrainLauncher } from '../main/brain/brain-launcher';
import { BrainPool } from '../main/brain/brain-pool';
import { brainEntry, ensureBuilt } from './build';
import { fmt, percentile } from './stats';

const BRAINS = Number(process.env.BENCH_BRAINS ?? 4);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 6);
ensureBuilt();
// One launcher for the run, as one host has one: started (its one fork) before the first round.
const launcherProcess = new BrainLauncher();
await new Promise((r) => launcherProcess.spawn(process.execPath, ['-e', ''], {}).once('close', r));

async function round(launcher: boolean) {
  const pool = new BrainPool({ entry: brainEntry, size: BRAINS, launcher: launcher && launcherProcess });
  const h = monitorEventLoopDelay({ resolution: 1 });
  h.enable();
  // The sampling timer runs before the fill, so a fill that holds the loop shows as a delay.
  await new Promise((r) => setTimeout(r, 50));
  const t = performance.now();
  pool.fill();
  const held = performance.now() - t;
  while (pool.ready < BRAINS) await new Promise((r) => setTimeout(r, 10));
  const startedIn = performance.now() - t;
  h.disable();
  pool.stop();
  await new Promise((r) => setTimeout(r, 300));
  return { held, p99: h.percentile(99) / 1e6, max: h.max / 1e6, startedIn };
}

const modes = { fork: [] as Awaited<ReturnType<typeof round>>[], launcher: [] as Awaited<ReturnType<typeof round>>[] };
for (let i = 0; i < ROUNDS; i++) {
  modes.fork.push(await round(false));
  modes.launcher.push(await round(true));
}
const med = (xs: number[]) => fmt(percentile(xs, 50), 1);
console.log(`${BRAINS} brains per round, ${ROUNDS} rounds per mode (alternating), ${os.cpus().length} cores, load ${os.loadavg().map((l) => fmt(l, 2)).join(', ')}`);
console.log('mode       fill held the loop   loop delay p99   loop delay max   all ready after   (p50 over rounds, ms)');
for (const [name, rs] of Object.entries(modes)) {
  console.log(`${name.padEnd(10)} ${med(rs.map((r) => r.held)).padStart(17)}   ${med(rs.map((r) => r.p99)).padStart(14)}   ${med(rs.map((r) => r.max)).padStart(14)}   ${med(rs.map((r) => r.startedIn)).padStart(15)}`);
}
launcherProcess.stop();
process.exit(0);
