/**
 * `npm run bench:ttft [-- --quick] [--out DIR]`: time to first token (from a session's
 * user.message to its model's first token) on the same host in two modes, side by side:
 * coupled (each session's hand is provisioned in full — container started or host connected, the
 * repository cloned, its set-up run — before the model is called, as a harness living in its
 * container must) and decoupled (the normal host: hands are provisioned when a tool first needs
 * one). Real hands (the private dockerd and sshd of test/hands-env), a repository made here
 * (BENCH_FILES files, BENCH_COMMITS commits) cloned as each session's resource, the test model
 * server with a first-token delay (BENCH_FIRST_TOKEN_MS, "min-max"). Sessions alternate docker
 * and ssh; in one round of the two in BENCH_TOOL_EVERY, both call a tool in their first turn (the
 * rest never touch a hand);
 * BENCH_CONCURRENCY run at a time; each then asks a follow-up (its next turn). Prints p50/p95 per
 * mode (TTFT, and user.message → model request for the first and the next turn), the reductions,
 * and the decoupled first tool call's latency (the cost moved to it), as a table and JSON;
 * writes ttft.json and ttft.svg to DIR (default out/bench-ttft). A third mode, pooled, is decoupled with a warm pool
 * of hands per environment (hand-pool.ts), sized so that a replay of the decoupled mode's takes,
 * at the pace the pool allows, finds a hand each time (ttft-pool-size.ts; BENCH_HAND_POOL fixes
 * it, and a size below the demand is reported as such):
 * the first tool call with and without it, and the pool's hits and misses per kind. Each mode
 * starts once the machine is idle (settle.ts; at most BENCH_SETTLE_MS, 60 s; no wait in --quick).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { brainPoolSize } from '../main/brain/brain-pool';
import { ensureBuilt } from './build';
import { fmt } from './stats';
import type { Settled } from './settle';
import { backendTurn, handsEnv } from '../test/helpers/hands-env';
import { makeRepo } from './ttft-repo';
import { chart, summarise, table, type TtftSummary } from './ttft-report';
import { SATURATED } from './ttft-cores';
import { runMode, type TtftOptions } from './ttft-run';
import { sizePools, type PoolSizing } from './ttft-pool-size';

/** How a mode's start waited for the machine to be idle, and the load average then (it lags the cores by a minute). */
/** How busy the cores were while a mode's sessions ran (ttft-cores.ts). */
const coresLine = (m: { coresBusy: { mean: number; saturatedShare: number } }) =>
  Number.isFinite(m.coresBusy.mean) ? `cores ${fmt(m.coresBusy.mean * 100, 0)} % busy, at least ${fmt(SATURATED * 100, 0)} % in ${fmt(m.coresBusy.saturatedShare * 100, 0)} % of its 100 ms windows` : 'cores not sampled';
const startedAfter = (m: { settled: Settled; loadAtStart: number }) =>
  m.settled.waitedMs === 0
    ? `load average at its start ${fmt(m.loadAtStart, 2)}`
    : `started after ${fmt(m.settled.waitedMs / 1000, 1)} s waiting for an idle machine (cores ${fmt(m.settled.busy * 100, 0)} % busy${m.settled.capped ? ', still busy at the cap' : ''}; load average ${fmt(m.loadAtStart, 2)})`;

const num = (name: string, fallback: number) => (process.env[name] ? Number(process.env[name]) : fallback);

/** Runs both modes and writes the report; returns the figures. */
export async function benchTtft(opts: { quick: boolean; outDir: string; log?: (line: string) => void }): Promise<TtftSummary & { json: string; svg: string }> {
  const log = opts.log ?? console.log;
  const q = opts.quick;
  const docker = handsEnv('docker');
  const ssh = handsEnv('ssh');
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'corral-bench-ttft-repo-'));
  const files = num('BENCH_FILES', q ? 200 : 3000);
  const commits = num('BENCH_COMMITS', q ? 3 : 12);
  const started = Date.now();
  const repoUrl = makeRepo(path.join(scratch, 'project'), files, commits);
  log(`repository: ${files} files, ${commits} commits (made in ${fmt((Date.now() - started) / 1000, 1)} s)`);
  const o: TtftOptions = {
    sessions: num('BENCH_SESSIONS', q ? 6 : 60),
    concurrency: num('BENCH_CONCURRENCY', q ? 2 : 4),
    toolEvery: num('BENCH_TOOL_EVERY', q ? 3 : 4),
    firstTokenMs: process.env.BENCH_FIRST_TOKEN_MS ?? (q ? '20-60' : '600-1400'),
    repoUrl,
    // Enough brains started ahead for the sessions that start together (CORRAL_BRAIN_POOL overrides).
    poolSize: process.env.CORRAL_BRAIN_POOL ? brainPoolSize() : num('BENCH_CONCURRENCY', q ? 2 : 4) + 2,
    // Sized from the decoupled mode's demand before the pooled mode runs (ttft-pool-size.ts).
    handPool: 0,
    environments: [
      { name: 'docker', config: { type: 'docker', image: docker.CORRAL_TEST_DOCKER_IMAGE, docker_host: docker.CORRAL_TEST_DOCKER_HOST } },
      {
        name: 'ssh',
        perWorker: true,
        config: { type: 'ssh', host: ssh.CORRAL_TEST_SSH_HOST, port: Number(ssh.CORRAL_TEST_SSH_PORT), user: ssh.CORRAL_TEST_SSH_USER, identity_file: ssh.CORRAL_TEST_SSH_KEY },
      },
    ],
    // Set-up as a project's would look at its tree: every file read once.
    setup: 'cat $(find repo -type f | head -2000) > /dev/null; find repo -type f | wc -l',
    // The quick run is a test among others running at once: the machine is never idle there.
    settleCapMs: num('BENCH_SETTLE_MS', q ? 0 : 60_000),
  };
  log(
    `${o.sessions} sessions per mode, ${o.concurrency} at a time, docker and ssh in turn, one in ${o.toolEvery} of each kind calls a tool in its first turn; ${o.poolSize} brains pooled; first token after ${o.firstTokenMs} ms; ` +
      `${os.cpus().length} cores, load average ${os.loadavg().map((l) => fmt(l, 2)).join(', ')}`,
  );
  // The ssh hosts are shared with tests that kill or freeze them: the bench takes its turn.
  const release = await backendTurn('ssh');
  let coupled, decoupled, pooled;
  let sizing: PoolSizing[] = [];
  try {
    coupled = await runMode('coupled', o);
    log(`coupled: done (${coupled.length} sessions; ${startedAfter(coupled)}; ${coresLine(coupled)}; host loop delay p99 ${fmt(coupled.loopDelay.p99, 1)} ms, max ${fmt(coupled.loopDelay.max, 1)} ms)`);
    decoupled = await runMode('decoupled', o);
    log(`decoupled: done (${decoupled.length} sessions; ${startedAfter(decoupled)}; ${coresLine(decoupled)}; host loop delay p99 ${fmt(decoupled.loopDelay.p99, 1)} ms, max ${fmt(decoupled.loopDelay.max, 1)} ms)`);
    sizing = sizePools(o, decoupled, process.env.BENCH_HAND_POOL ? Number(process.env.BENCH_HAND_POOL) : undefined);
    for (const p of sizing) log(p.note);
    o.handPool = Object.fromEntries(sizing.map((p) => [p.kind, p.size]));
    pooled = await runMode('pooled', o);
    log(`pooled: done (${pooled.length} sessions; ${startedAfter(pooled)}; ${coresLine(pooled)}; host loop delay p99 ${fmt(pooled.loopDelay.p99, 1)} ms, max ${fmt(pooled.loopDelay.max, 1)} ms; pools of ${sizing.map((p) => `${p.kind} ${p.size}`).join(', ')} per environment)`);
    log(`the pools at the end: ${JSON.stringify(pooled.poolEnd)}`);
  } finally {
    release();
    await fs.promises.rm(scratch, { recursive: true, force: true });
  }
  const s = { ...summarise(coupled, decoupled, pooled), poolSizing: sizing.map(({ note: _n, ...p }) => p) };
  const caption = `${o.sessions} sessions/mode, ${o.concurrency} at a time, ${files} files, first token ${o.firstTokenMs} ms, load ${fmt(os.loadavg()[0]!, 1)} on ${os.cpus().length} cores`;
  const json = JSON.stringify({ ...s, options: { ...o, repoUrl: undefined, files, commits }, load: os.loadavg(), sessions: { coupled, decoupled, pooled } }, null, 2);
  const svg = chart(s, caption);
  fs.mkdirSync(opts.outDir, { recursive: true });
  fs.writeFileSync(path.join(opts.outDir, 'ttft.json'), json);
  fs.writeFileSync(path.join(opts.outDir, 'ttft.svg'), svg);
  log(table(s));
  if (s.errors) log(`${s.errors} sessions ended with an error`);
  for (const p of sizing.filter((p) => p.size < p.demand)) log(`note: ${p.note}`);
  log(JSON.stringify({ ttft: s.ttft, toRequest: s.toRequest, nextToRequest: s.nextToRequest, nextToRequestNotSaturated: s.nextToRequestNotSaturated, reduction: s.reduction, requestFirstToken: s.requestFirstToken, reductionBound: s.reductionBound, firstToolCall: s.firstToolCall, handWait: s.handWait, poolHits: s.poolHits, poolHitsByKind: s.poolHitsByKind, poolSizing: s.poolSizing }));
  log(`written: ${path.join(opts.outDir, 'ttft.json')}, ${path.join(opts.outDir, 'ttft.svg')}; load average at the end ${os.loadavg().map((l) => fmt(l, 2)).join(', ')}`);
  return { ...s, json, svg };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const args = process.argv.slice(2);
  const outAt = args.indexOf('--out');
  ensureBuilt();
  benchTtft({ quick: args.includes('--quick'), outDir: outAt >= 0 ? args[outAt + 1]! : path.resolve(import.meta.dirname, '../out/bench-ttft') }).then(
    () => process.exit(0),
    (err) => {
      console.error(err);
      process.exit(1);
    },
  );
}
