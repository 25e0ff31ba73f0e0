import { execFileSync, fork } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { BrainPool } from '../main/brain/brain-pool';
import { brainPrime } from '../main/brain/brain-prime';
import { createHost } from '../main/host';
import { brainEntry } from './build';
import { settle, type Settled } from './settle';
import { CoreSampler, SATURATED } from './ttft-cores';

/** How one bench:ttft run is shaped. */
export interface TtftOptions {
  /** Sessions per mode. */
  sessions: number;
  /** Sessions running at a time. */
  concurrency: number;
  /** One session in this many touches its hand in its first turn (a bash call). */
  toolEvery: number;
  /** The model's first-token delay, "min-max" ms. */
  firstTokenMs: string;
  /** The repository every session's environment clones, a file:// URL. */
  repoUrl: string;
  /**
   * Environment configs the sessions take in turn (docker, ssh). `perWorker`: one environment per
   * concurrent worker, each with its own working_dir (an ssh host's work folder is shared by its
   * connections: two sessions cloning into it at once would collide).
   */
  environments: { name: string; config: Record<string, unknown>; perWorker?: boolean }[];
  /** Pooled mode: hands made ahead per environment (hand-pool.ts), one size for all or by kind (ttft-pool-size.ts). */
  handPool: number | Record<string, number>;
  /** Brains started ahead (brain-pool.ts). */
  poolSize: number;
  /** The set-up a coupled session runs on its hand after the clone, before its first model request. */
  setup: string;
  /** The longest a mode waits for an idle machine before it starts (settle.ts); 0: no wait. */
  settleCapMs: number;
}

/** One session's timings (ms). */
export interface SessionTiming {
  env: string;
  tool: boolean;
  /** The worker that ran it (its environment of a per-worker kind is `${env}-w${worker}`). */
  worker: number;
  /** When its user.message was sent, when it was done, and its tool_use, ms from the mode's start (the pool sizing replays them). */
  at: number;
  doneAt: number;
  toolAt?: number;
  /** user.message → span.model_request_start */
  toRequest: number;
  /** user.message → the model's first token (toRequest + the request's first_token_ms) */
  ttft: number;
  /** The session's next turn, once its first is done: its user.message → span.model_request_start. */
  nextToRequest: number;
  /** The first tool call: agent.tool_use logged → agent.tool_result logged. */
  firstTool?: number;
  /** The first tool call's wait for its hand: agent.tool_use logged → hand.ready logged. */
  firstToolHand?: number;
  /** The cores' busy share (0–1) in the busiest 100 ms window its next turn overlapped (ttft-cores.ts). */
  nextBusy?: number;
  /** The same for its first tool call. */
  firstToolBusy?: number;
  /** The hand came from the warm pool (hand.taken_from_pool). */
  pooled?: boolean;
  /** The session's repository reached its hand (hand.resource_applied) before its first model request. */
  clonedBeforeModel: boolean;
  /** The repository reached the hand in this session (hand.resource_applied). */
  cloned: boolean;
  error?: string;
}

const now = () => performance.now();

/** coupled: provision, then the model; decoupled: hands at first use; pooled: decoupled with a warm pool of hands. */
export type TtftMode = 'coupled' | 'decoupled' | 'pooled';

/** Starts bench:ttft's model server (ttft-model.ts) in its own process. */
async function startModel(firstTokenMs: string) {
  const child = fork(path.join(import.meta.dirname, 'ttft-model.ts'), [], { execArgv: ['--import', 'tsx'], env: { ...process.env, BENCH_FIRST_TOKEN_MS: firstTokenMs } });
  const url = await new Promise<string>((resolve) => child.once('message', (m: { url: string }) => resolve(m.url)));
  return { url, stop: () => new Promise<void>((resolve) => (child.once('exit', () => resolve()), child.send({ t: 'stop' }))) };
}

/**
 * Runs the sessions of one mode on a fresh host. Coupled: each session's hand is provisioned in
 * full (container or connection, clone, set-up) before its first brain starts, as a harness
 * inside its container must; decoupled: the normal host, hands provisioned at first use.
 */
export async function runMode(mode: TtftMode, o: TtftOptions): Promise<SessionTiming[] & { wallMs: number; loadAtStart: number; settled: Settled; coresBusy: { mean: number; saturatedShare: number }; loopDelay: { p99: number; max: number }; poolEnd?: unknown[] }> {
  const model = await startModel(o.firstTokenMs);
  process.env.ANTHROPIC_BASE_URL = model.url;
  process.env.ANTHROPIC_API_KEY = 'bench';
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), `corral-bench-ttft-${mode}-`));
  const workRoot = fs.mkdtempSync(path.join(os.tmpdir(), `corral-bench-ttft-work-`));
  // BENCH_BRAIN_LAUNCHER=0: brains forked by the host, as before brain-launcher.ts (for comparison).
  const pool = new BrainPool({ entry: brainEntry, size: o.poolSize, launcher: process.env.BENCH_BRAIN_LAUNCHER !== '0' });
  const poolSizes: Record<string, number> = {};
  const sizeOf = (kind: string) => (typeof o.handPool === 'number' ? o.handPool : (o.handPool[kind] ?? 0));
  const envNames = o.environments.flatMap((e) => (e.perWorker ? Array.from({ length: o.concurrency }, (_, k) => [`${e.name}-w${k}`, e.name]) : [[e.name, e.name]]));
  if (mode === 'pooled') for (const [name, kind] of envNames) poolSizes[name!] = sizeOf(kind!);
  const host = createHost({
    dataDir,
    workRoot,
    handPool: poolSizes,
    brains: {
      spawn: (id) => pool.spawn(id, () => brainPrime(host.log, host.hands, id)),
      ...(mode === 'coupled' ? { beforeFirstBrain: (id: string) => host.hands.execute(id, undefined, 'bash', { command: o.setup }) } : {}),
    },
  });
  await host.started;
  pool.fill();
  const make = (name: string, config: Record<string, unknown>) => host.environments.create({ name, config: config as never, metadata: {}, description: null }).id;
  // envs[kind][worker]: the environment a worker's sessions of that kind use.
  const envs = o.environments.map((e) => ({
    name: e.name,
    ids: e.perWorker ? Array.from({ length: o.concurrency }, (_, k) => make(`${e.name}-w${k}`, { ...e.config, working_dir: `corral-bench-ttft/w${k}` })) : [make(e.name, e.config)],
  }));
  const agent = {
    type: 'agent',
    id: 'agent_ttft',
    version: 1,
    name: 'ttft',
    model: { id: 'bench' },
    system: null,
    tools: [{ type: 'agent_toolset_20260401', configs: [], default_config: { enabled: true, permission_policy: { type: 'always_allow' } } }],
  };
  type Track = { asked: number; askedNext?: number; startedNext?: number; cloned?: number; started?: number; firstTokenMs?: number; toolUse?: number; toolResult?: number; handReady?: number; pooled?: boolean; idle: boolean; error?: string };
  const tracks = new Map<string, Track>();
  const stop = host.log.subscribeAll(({ sessionId, event }) => {
    const t = tracks.get(sessionId);
    if (!t) return;
    const e = event as { type: string; first_token_ms?: number; error?: { message?: string } };
    if (e.type === 'span.model_request_start') {
      t.started ??= now();
      if (t.askedNext !== undefined) t.startedNext ??= now();
    } else if (e.type === 'span.model_request_end' && t.firstTokenMs === undefined) t.firstTokenMs = e.first_token_ms ?? NaN;
    else if (e.type === 'agent.tool_use') t.toolUse ??= now();
    else if (e.type === 'agent.tool_result') t.toolResult ??= now();
    else if (e.type === 'hand.resource_applied') t.cloned ??= now();
    else if (e.type === 'hand.ready') t.handReady ??= now();
    else if (e.type === 'hand.taken_from_pool') t.pooled = true;
    else if (e.type === 'hand.resource_failed') t.error ??= `clone failed: ${(event as { error?: string }).error}`;
    else if (e.type === 'session.error') t.error ??= e.error?.message ?? 'session.error';
    else if (e.type === 'session.status_idle') t.idle = true;
  });
  // Let the brain pool fill before the first session, as on a host that has been up a while.
  await new Promise((r) => setTimeout(r, 1500));
  if (mode === 'pooled') await warmPools(host, envs.flatMap((e) => e.ids), o);
  // What the set-up (and the mode before) wrote goes to disk now, not while this mode is measured:
  // a pool's warm-up unpacks tens of thousands of files, whose writeback stalled the sessions after it.
  execFileSync('sync');
  // And what the mode before left running (containers and folders being removed) finishes first.
  const settled = o.settleCapMs > 0 ? await settle({ capMs: o.settleCapMs }) : { waitedMs: 0, busy: NaN, capped: false };
  const loadAtStart = os.loadavg()[0]!;
  const out: SessionTiming[] = [];
  // Each session's next turn and first tool call, to look up how busy the cores were meanwhile once the mode is over.
  const spans: { s: SessionTiming; next: [number, number]; tool?: [number, number] }[] = [];
  const cores = new CoreSampler();
  let next = 0;
  const worker = async (k: number) => {
    for (let i = next++; i < o.sessions; i = next++) {
      // Kinds alternate, session by session; the sessions that call a tool are every toolEvery-th
      // round of kinds, all of that round's, so each kind has as many sessions, and as many that
      // call a tool. (Choosing the tool sessions first, one in toolEvery, and alternating their
      // kinds apart from the rest's, made the full run 37 ssh and 23 docker sessions.)
      const round = Math.floor(i / envs.length);
      const tool = round % o.toolEvery === 0;
      const kind = envs[i % envs.length]!;
      const env = { name: kind.name, id: kind.ids[k % kind.ids.length]! };
      const { session } = host.log.createSession(
        {
          environment_id: env.id,
          record: { agent, title: `ttft ${i}`, metadata: {}, resources: [{ type: 'github_repository', url: o.repoUrl, mount_path: '/workspace/repo' }], vault_ids: [] },
        },
        [],
      );
      const t: Track = { asked: now(), idle: false };
      tracks.set(session.id, t);
      host.log.emitEvent(session.id, { type: 'user.message', content: [{ type: 'text', text: `ttft ${i}${tool ? ' [tool]' : ''}` }] });
      const deadline = Date.now() + 120_000;
      while (!(t.idle && t.started !== undefined && t.firstTokenMs !== undefined)) {
        if (Date.now() > deadline) throw new Error(`session ${i} (${mode}) did not finish in 2 minutes`);
        await new Promise((r) => setTimeout(r, 5));
      }
      const toRequest = t.started! - t.asked;
      const doneAt = now() - t0;
      // Its next turn, on the brain it already has (a user asking a follow-up).
      t.idle = false;
      t.askedNext = now();
      host.log.emitEvent(session.id, { type: 'user.message', content: [{ type: 'text', text: `ttft ${i} next` }] });
      while (!(t.idle && t.startedNext !== undefined)) {
        if (Date.now() > deadline) throw new Error(`session ${i} (${mode}) did not finish its next turn in 2 minutes`);
        await new Promise((r) => setTimeout(r, 5));
      }
      const timing: SessionTiming = {
        env: env.name,
        tool,
        worker: k,
        at: t.asked - t0,
        doneAt,
        ...(t.toolUse !== undefined ? { toolAt: t.toolUse - t0 } : {}),
        toRequest,
        ttft: toRequest + t.firstTokenMs!,
        nextToRequest: t.startedNext! - t.askedNext,
        cloned: t.cloned !== undefined,
        clonedBeforeModel: t.cloned !== undefined && t.cloned < t.started!,
        ...(t.toolUse !== undefined && t.toolResult !== undefined ? { firstTool: t.toolResult - t.toolUse } : {}),
        ...(t.toolUse !== undefined && t.handReady !== undefined && t.handReady >= t.toolUse ? { firstToolHand: t.handReady - t.toolUse } : {}),
        ...(t.pooled ? { pooled: true } : {}),
        ...(t.error ? { error: t.error } : {}),
      };
      out.push(timing);
      spans.push({ s: timing, next: [t.askedNext, t.startedNext!], ...(t.toolUse !== undefined && t.toolResult !== undefined ? { tool: [t.toolUse, t.toolResult] as [number, number] } : {}) });
      // Its container or connection goes now: later sessions do not run beside a pile of them.
      await host.hands.release(session.id, 'main').catch(() => {});
    }
  };
  await cores.start();
  const t0 = now();
  // The host's event loop while the sessions run (this process is the host).
  const delay = monitorEventLoopDelay({ resolution: 5 });
  delay.enable();
  let poolEnd: unknown[] | undefined;
  try {
    await Promise.all(Array.from({ length: o.concurrency }, (_, k) => worker(k)));
  } finally {
    delay.disable();
    await cores.stop();
    stop();
    // What the pools went through (misses, failures and why), for the report.
    if (mode === 'pooled') poolEnd = host.hands.pool.state().map(({ environment_id: _id, ...p }) => p);
    await host.close();
    pool.stop();
    await model.stop();
    await fs.promises.rm(dataDir, { recursive: true, force: true });
    await fs.promises.rm(workRoot, { recursive: true, force: true });
  }
  for (const { s, next, tool } of spans) {
    s.nextBusy = cores.busiestDuring(...next);
    if (tool) s.firstToolBusy = cores.busiestDuring(...tool);
  }
  // How long the sessions took together, and how busy the cores were meanwhile.
  const coresBusy = { mean: cores.mean(), saturatedShare: cores.shareAtLeast(SATURATED) };
  return Object.assign(out, { wallMs: now() - t0, loadAtStart, settled, coresBusy, loopDelay: { p99: delay.percentile(99) / 1e6, max: delay.max / 1e6 }, ...(poolEnd ? { poolEnd } : {}) });
}

/**
 * Before measuring the pooled mode: one session per environment asks for its hand with the
 * repository (the pool learns what to make ahead, as on a host that has been up a while), then
 * the pools are left to fill.
 */
async function warmPools(host: ReturnType<typeof createHost>, envIds: string[], o: TtftOptions): Promise<void> {
  await Promise.all(
    envIds.map(async (id) => {
      const { session } = host.log.createSession({ environment_id: id, record: { agent: { model: { id: 'bench' }, tools: [] }, resources: [{ type: 'github_repository', url: o.repoUrl, mount_path: '/workspace/repo' }] } }, []);
      await host.hands.execute(session.id, undefined, 'bash', { command: 'true' });
      await host.hands.release(session.id, 'main');
    }),
  );
  const deadline = Date.now() + 300_000;
  const full = () => host.hands.pool.state().filter((p) => envIds.includes(p.environment_id) && p.ready >= p.size).length === envIds.filter((id) => (host.hands.pool.state().find((p) => p.environment_id === id)?.size ?? 0) > 0).length;
  while (!full()) {
    if (Date.now() > deadline) throw new Error(`the hand pools did not fill in 5 minutes: ${JSON.stringify(host.hands.pool.state())}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
