import { setMaxListeners } from 'node:events';
import posix from 'node:path/posix';
import type { EnvironmentStore } from '../catalog/environments';
import type { Logger } from '../logging/logger';
import { createShellHand, envExports, removeRemoteDir, shq } from './remote/shell-hand';
import type { HandEnvSource, VaultSshKey } from './hand-env';
import { prestartShell, type PrestartedShell } from './prestarted-shell';
import type { ShellSession } from './shell-session';
import type { RemoteHandKind, RemoteShell } from './remote/types';
import { RepoPacks } from './hand-pool-pack';
import { RefillSlots } from './hand-pool-slots';
import { repoKey, type RepoResource } from './resources';

/** Options of a warm pool of hands. */
export interface HandPoolOptions {
  environments: EnvironmentStore;
  kinds: Record<string, RemoteHandKind<any>>;
  /** Hands kept ready per environment, by environment id or name (`CORRAL_HAND_POOL`). */
  sizes: Record<string, number>;
  logger?: Logger;
  /** How often environments named in `sizes` are looked for again (created later, renamed); ms. */
  rescanMs?: number;
  /** After a hand is taken, how long before any pooled hand is made (its replacement or another; ms, default 1000). */
  refillDelayMs?: number;
  /** Pooled hands made at once, across all environments (default 1; hand-pool-slots.ts). */
  refillsAtOnce?: number;
  /**
   * The vault's SSH keys for a host (HandEnvSource.sshKeys): a pooled hand is connected with the
   * keys a session without keys of its own gets (no session), and given only to a session whose
   * keys for that host are the same, as a hand connected for it would have used.
   */
  sshKeys?: HandEnvSource['sshKeys'];
}

/** A pooled hand taken by a session: connected, its work folder made, repositories on it. */
export interface PooledHand {
  id: string;
  shell: RemoteShell;
  workDir: string;
  /** repoKey of each repository already on the hand. */
  preApplied: ReadonlySet<string>;
  /** How long it took to make (connect + clone), ms. */
  provisionedMs: number;
  /** How long it waited in the pool, ms. */
  waitedMs: number;
  /** Its persistent shell, started and set up ahead (the first bash call adopts it; once). */
  adoptShell?: () => ShellSession | undefined;
}

/** What the hands panel shows of one environment's pool. */
export interface HandPoolState {
  environment_id: string;
  name: string;
  size: number;
  ready: number;
  provisioning: number;
  /** Of those being made, how many wait their turn (refills take turns across pools). */
  queued: number;
  taken: number;
  misses: number;
  failures: number;
  last_error?: string;
}

interface Entry {
  id: string;
  envId: string;
  configKey: string;
  resKey: string;
  shell: RemoteShell;
  workDir: string;
  preApplied: Set<string>;
  provisionedMs: number;
  readyAt: number;
  /** The vault keys it was connected with (their names) and the host they were asked for. */
  keys?: { host: string; names: string; accepted?: { name: string; target: string } };
  prestarted?: PrestartedShell;
}

interface EnvPool {
  id: string;
  name: string;
  size: number;
  ready: Entry[];
  /** Being made, queued included. */
  provisioning: number;
  queued: number;
  taken: number;
  misses: number;
  failures: number;
  lastError?: string;
  /** The repositories the last session that took (or wanted) a hand here had: made ahead next. */
  repos: RepoResource[];
}

/** Failed provisionings in a row after which an environment's pool waits for the next rescan. */
const MAX_FAILURES_IN_A_ROW = 3;
/** Pooled hands' work, here and on the hand, runs at the lowest priority: sessions' work comes first. */
const NICENESS = 19;
/** Kinds whose connections share one work folder per host: each pooled hand gets its own. */
const SHARED_WORK_DIR_KINDS = new Set(['ssh']);

const keyOf = (repos: readonly RepoResource[]) => JSON.stringify(repos.map(repoKey).sort());
/** Which vault keys (by credential name and id), in the order they are offered. */
const keyNames = (keys: readonly VaultSshKey[]) => JSON.stringify(keys.map((k) => k.name));

/** Parses `CORRAL_HAND_POOL` ("ENV=SIZE,ENV=SIZE", an environment's id or name); empty: no pool. */
export function parseHandPoolSizes(v: string | undefined): Record<string, number> {
  const out: Record<string, number> = {};
  for (const part of (v ?? '').split(',').map((p) => p.trim()).filter(Boolean)) {
    const at = part.lastIndexOf('=');
    const size = Number(part.slice(at + 1));
    if (at <= 0 || !Number.isInteger(size) || size < 0 || size > 32) throw new Error(`CORRAL_HAND_POOL: '${part}' is not ENVIRONMENT=SIZE (0–32)`);
    out[part.slice(0, at)] = size;
  }
  return out;
}

/**
 * Hands made ahead of need, per environment (ssh and docker kinds; off unless sizes are given),
 * so a session's first tool call finds its hand connected and its repository already there. A
 * pooled hand is made without any session: connected with the environment's config as it is then
 * (a hand whose config has changed since is not given out), in a work folder of its own, with the
 * repositories the environment's last session had (public ones only: a repository the session's
 * vault routes through the git proxy is never made ahead, so no credential is used without a
 * session). `take` gives each hand to one session only and removes it from the pool; it is then
 * an ordinary hand of that session, disposed with it, never returned. Taken hands are replaced in
 * the background; `stop` closes every hand still waiting (and those being made) and removes their
 * work folders.
 */
export class HandPool {
  private readonly pools = new Map<string, EnvPool>();
  private readonly ctrl = new AbortController();
  private readonly making = new Set<Promise<void>>();
  private readonly slots: RefillSlots;
  private readonly packs = new RepoPacks();
  private rescanTimer?: NodeJS.Timeout;
  private seq = 0;
  private readonly listeners = new Set<(state: HandPoolState[]) => void>();
  private telling = false;

  constructor(private readonly opts: HandPoolOptions) {
    // Every hand being made listens to it (connect, clone): a pool of many is not a leak.
    setMaxListeners(256, this.ctrl.signal);
    this.slots = new RefillSlots(Math.max(1, opts.refillsAtOnce ?? 1), opts.refillDelayMs ?? 1000);
  }

  /** Whether any environment has a pool configured. */
  get enabled(): boolean {
    return Object.values(this.opts.sizes).some((n) => n > 0);
  }

  /** Finds the configured environments and starts making hands; rescans now and then. */
  start(): void {
    if (!this.enabled) return;
    this.fill();
    this.rescanTimer = setInterval(() => this.fill(), this.opts.rescanMs ?? 10_000);
    this.rescanTimer.unref();
  }

  /** Tops every configured environment's pool up to its size (in the background). */
  fill(): void {
    if (this.ctrl.signal.aborted || !this.enabled) return;
    for (const [key, size] of Object.entries(this.opts.sizes)) {
      const env = this.opts.environments.get(key) ?? this.opts.environments.list({ limit: 100 }).data.find((e) => e.record.name === key);
      if (!env || env.archived_at) continue;
      const pool = this.pools.get(env.id) ?? { id: env.id, name: String(env.record.name ?? env.id), size, ready: [], provisioning: 0, queued: 0, taken: 0, misses: 0, failures: 0, repos: [] };
      pool.size = size;
      this.pools.set(env.id, pool);
      // After failures in a row, one attempt per rescan (an unreachable host is not hammered).
      if (pool.failures >= MAX_FAILURES_IN_A_ROW && pool.provisioning > 0) continue;
      const want = pool.failures >= MAX_FAILURES_IN_A_ROW ? Math.min(1, pool.size - pool.ready.length) : pool.size - pool.ready.length - pool.provisioning;
      for (let i = 0; i < want; i++) this.makeOne(pool);
    }
  }

  /**
   * A hand for a session of this environment, or undefined (no pool, none ready, config changed).
   * `repos`: the repositories the session wants on it, or null when it must get none made ahead
   * (not its main hand, or its vault routes one through the git proxy).
   */
  async take(environmentId: string | undefined, config: Record<string, unknown>, repos: RepoResource[] | null, sessionId?: string): Promise<PooledHand | undefined> {
    if (!environmentId || this.ctrl.signal.aborted) return undefined;
    // An environment made since the last scan is found now (its first session misses, and teaches).
    if (!this.pools.has(environmentId)) this.fill();
    const pool = this.pools.get(environmentId);
    if (!pool) return undefined;
    const configKey = JSON.stringify(config);
    const resKey = keyOf(repos ?? []);
    const hit = pool.ready.find((e) => e.configKey === configKey && e.resKey === resKey && e.shell.lostReason === undefined);
    // Learn what to make next: the public repositories sessions here want. Hands made for other
    // repositories or an older config go, to make room for the right kind.
    if (repos && resKey !== keyOf(pool.repos)) pool.repos = repos;
    const current = keyOf(pool.repos);
    for (const e of pool.ready.filter((e) => e !== hit && (e.configKey !== configKey || e.resKey !== current))) {
      pool.ready.splice(pool.ready.indexOf(e), 1);
      void this.discard(e);
    }
    if (!hit) {
      pool.misses += 1;
      this.changed();
      this.fill();
      return undefined;
    }
    pool.ready.splice(pool.ready.indexOf(hit), 1);
    // Connected with vault keys other than the session's own for that host: not its hand (it goes
    // back; the session connects with its keys, as without a pool).
    const own = hit.keys && (await this.sessionKeys(hit.keys, sessionId));
    if (hit.keys && !own) {
      pool.ready.unshift(hit);
      pool.misses += 1;
      this.changed();
      return undefined;
    }
    // The login was made ahead, for no session: the ledger of the session that takes the hand gets it.
    const login = hit.keys?.accepted;
    if (login && own) own.find((k) => k.name === login.name)?.used(login.target);
    pool.taken += 1;
    this.slots.taken();
    this.changed();
    // Not at once: the session that took the hand is about to use it (and its brain the host),
    // and a clone and unpack for the replacement would compete with them for the CPU.
    setTimeout(() => this.fill(), this.opts.refillDelayMs ?? 1000).unref();
    return { id: hit.id, shell: hit.shell, workDir: hit.workDir, preApplied: hit.preApplied, provisionedMs: hit.provisionedMs, waitedMs: Date.now() - hit.readyAt, ...(hit.prestarted ? { adoptShell: hit.prestarted.take } : {}) };
  }

  /** The session's vault keys for the hand's host when they are the ones it was connected with; undefined otherwise. */
  private async sessionKeys(keys: NonNullable<Entry['keys']>, sessionId: string | undefined): Promise<readonly VaultSshKey[] | undefined> {
    if (!this.opts.sshKeys) return [];
    try {
      const own = await this.opts.sshKeys(sessionId, keys.host);
      return keyNames(own) === keys.names ? own : undefined;
    } catch {
      return undefined;
    }
  }

  /**
   * Each pool's state now, then again whenever it changes (a hand being made, ready, taken, lost,
   * a miss, a failure): the window's live view. Changes within one turn are told once.
   */
  subscribe(listener: (state: HandPoolState[]) => void): () => void {
    this.listeners.add(listener);
    listener(this.state());
    return () => this.listeners.delete(listener);
  }

  private changed(): void {
    if (this.telling || this.listeners.size === 0) return;
    this.telling = true;
    setImmediate(() => {
      this.telling = false;
      const state = this.state();
      for (const l of this.listeners) {
        try {
          l(state);
        } catch {
          // A listener's failure is its own (a closed window).
        }
      }
    });
  }

  /** Each environment's pool, for the hands panel. */
  state(): HandPoolState[] {
    return [...this.pools.values()].map((p) => ({
      environment_id: p.id,
      name: p.name,
      size: p.size,
      ready: p.ready.length,
      provisioning: p.provisioning,
      queued: p.queued,
      taken: p.taken,
      misses: p.misses,
      failures: p.failures,
      ...(p.lastError ? { last_error: p.lastError } : {}),
    }));
  }

  /** Stops making hands and closes every hand not given out, waiting for those being made. */
  async stop(): Promise<void> {
    this.ctrl.abort();
    this.slots.stop();
    this.listeners.clear();
    clearInterval(this.rescanTimer);
    await Promise.allSettled([...this.making]);
    const all = [...this.pools.values()].flatMap((p) => p.ready.splice(0));
    await Promise.allSettled(all.map((e) => this.discard(e)));
    this.packs.clear();
  }

  private makeOne(pool: EnvPool): void {
    pool.provisioning += 1;
    pool.queued += 1;
    this.changed();
    // Its turn comes when fewer than refillsAtOnce are being made; the emptiest pool's first.
    const turn = this.slots.acquire(() => pool.ready.length / Math.max(1, pool.size));
    const job = (async () => {
      const go = await turn;
      pool.queued -= 1;
      if (!go) return;
      this.changed();
      await this.provision(pool).finally(() => this.slots.release());
    })().finally(() => {
      pool.provisioning -= 1;
      this.making.delete(job);
      this.changed();
      // A hand made for what is no longer wanted was dropped: make the right one (failures back off instead).
      if (pool.failures === 0 && pool.ready.length + pool.provisioning < pool.size) this.fill();
    });
    this.making.add(job);
  }

  private async provision(pool: EnvPool): Promise<void> {
    const env = this.opts.environments.get(pool.id);
    const config = env?.record.config as ({ type: string } & Record<string, unknown>) | undefined;
    const kind = config ? this.opts.kinds[config.type] : undefined;
    if (!env || env.archived_at || !config || !kind) return;
    const id = `hpool_${Date.now().toString(36)}${(this.seq++).toString(36)}`;
    const repos = pool.repos;
    const started = Date.now();
    let shell: RemoteShell | undefined;
    let workDir: string | undefined;
    try {
      let keys: Entry['keys'];
      const sshKeys = this.opts.sshKeys;
      const vaultKeys = sshKeys && (async (host: string) => {
        const got = await sshKeys(undefined, host);
        const made: NonNullable<Entry['keys']> = { host, names: keyNames(got) };
        keys = made;
        // Recorded when a session takes the hand (see take), not now for none.
        return got.map((k) => ({ ...k, used: (target: string) => void (made.accepted = { name: k.name, target }) }));
      });
      shell = await kind.connect(config, { signal: this.ctrl.signal, label: `pool-${pool.name}`, ...(vaultKeys ? { vaultKeys } : {}) });
      // The folder as the kind resolved it at connect (absolute: commands run from it by default).
      const base = shell.workDir ?? (typeof config.working_dir === 'string' ? config.working_dir : kind.defaultWorkDir(config));
      // Fresh means a folder no other hand used: on a host that many connections share, its own.
      workDir = SHARED_WORK_DIR_KINDS.has(config.type) ? posix.join(base, '.corral-pool', id) : base;
      if (workDir !== base) {
        const made = await shell.exec(`mkdir -p ${shq(workDir)}`, { signal: this.ctrl.signal });
        if (made.exitCode !== 0) throw new Error(`cannot make the work folder ${workDir}: ${made.lost ?? `exit code ${made.exitCode}`}`);
      }
      const dir = workDir;
      const hand = createShellHand(shell, { workDir: dir, label: `pooled ${id}`, env: config.env as Record<string, string> | undefined });
      const { preApplied, reused } = await this.packs.putOn(repos, { hand, shell, workDir: dir }, { signal: this.ctrl.signal, niceness: NICENESS });
      // Set up in its work folder with the environment's variables, as the session's first bash
      // call will want it (adopting it, the session sends its own folder and variables again).
      const prestarted = shell.startShell && (await prestartShell(shell.startShell, { cwd: dir, exports: envExports(config.env as Record<string, string> | undefined) }));
      if (this.ctrl.signal.aborted) {
        prestarted?.close();
        throw new Error('the pool is stopping');
      }
      const entry: Entry = { id, envId: pool.id, configKey: JSON.stringify(config), resKey: keyOf(repos), shell, workDir: dir, preApplied, provisionedMs: Date.now() - started, readyAt: Date.now(), ...(keys ? { keys } : {}), ...(prestarted ? { prestarted } : {}) };
      // Lost while waiting: dropped and replaced.
      shell.onLost((reason) => {
        const at = pool.ready.indexOf(entry);
        if (at < 0) return;
        pool.ready.splice(at, 1);
        this.changed();
        this.opts.logger?.warn({ environment_id: pool.id, pool_hand: id, reason }, 'pooled hand lost while waiting');
        this.fill();
      });
      pool.failures = 0;
      // Made for repositories the environment's sessions no longer want: not kept.
      if (entry.resKey !== keyOf(pool.repos)) {
        return void this.discard(entry);
      }
      pool.ready.push(entry);
      delete pool.lastError;
      this.opts.logger?.info({ environment_id: pool.id, pool_hand: id, ms: entry.provisionedMs, repositories: repos.length, packs_reused: reused }, 'pooled hand ready');
      // Too many now (the size was lowered, repositories changed): the oldest goes.
      if (pool.ready.length > pool.size) void this.discard(pool.ready.shift()!);
    } catch (err) {
      if (shell) void this.close(shell, config.type, workDir);
      if (this.ctrl.signal.aborted) return;
      pool.failures += 1;
      pool.lastError = err instanceof Error ? err.message : String(err);
      this.opts.logger?.warn({ environment_id: pool.id, error: pool.lastError, failures: pool.failures }, 'pooled hand could not be made');
      if (pool.failures < MAX_FAILURES_IN_A_ROW) setTimeout(() => this.fill(), 1000 * pool.failures).unref();
    }
  }

  private discard(e: Entry): Promise<void> {
    const type = (this.opts.environments.get(e.envId)?.record.config as { type?: string } | undefined)?.type;
    e.prestarted?.close();
    return this.close(e.shell, type, e.workDir);
  }

  /** Closes a pooled hand no session got; its own work folder on a shared host goes with it. */
  private async close(shell: RemoteShell, type: string | undefined, workDir: string | undefined): Promise<void> {
    if (workDir && type && SHARED_WORK_DIR_KINDS.has(type) && shell.lostReason === undefined) await removeRemoteDir(shell, workDir);
    await shell.close().catch(() => {});
  }
}
