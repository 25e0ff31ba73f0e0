import fs from 'node:fs';
import path from 'node:path';
import type { EnvironmentStore } from '../catalog/environments';
import type { Logger } from '../logging/logger';
import type { SessionLog } from '../session/store';
import { createLocalHand } from './local';
import { checkWorkRoot, describeLocal, describeNetwork, sandboxNotice, sandboxPolicy, workingDirProblem, type LocalConfig, type LocalPlaces } from './local-policy';
import { sandboxAvailability, type SandboxState } from './local/sandbox';
import { pgroupDir, ProcessGroupLedger } from './pgroups';
import { createShellHand } from './remote/shell-hand';
import { ownFolder, sessionWorkDir } from './session-work-dir';
import { applyResources, type RepoRouter, type ResourceTarget } from './resources';
import { HandPool, type PooledHand } from './hand-pool';
import { takePooledHand } from './hand-pool-take';
import { firstCallStarted } from './first-calls';
import { progressToLog } from './provision-progress';
import { localReach, placeCaOnShell, withSandboxNet, type HandEnvSource } from './hand-env';
import { BUILTIN_TOOL_NAMES } from './tools/definitions';
import type { TextFilter } from './write-text';
import { keepFullOutput } from './full-output';
import type { KindTool, RemoteHandKind, RemoteShell } from './remote/types';
import { HAND_MEMBERSHIP_EVENTS, HandMembership, HandRequestError, MAIN_HAND, type HandMember } from './membership';
import { VaultRoutes } from './vault-routes';
import type { ExecuteOptions, ToolOutcome } from './types';
import { callThroughWorker } from './dial-in/call';
import { endHands, LiveHands, type Live } from './live-hands';
import type { DialIn } from './dial-in/service';

const describeNetworkOf = (hosts: readonly string[]) => describeNetwork({ denyRead: [], allowedHosts: hosts });

/** Upper bound of any one call on a hand; bash's own timeout is usually shorter. */
const CALL_TIMEOUT_MS = 15 * 60_000;

/** A hand as the brain sees it: a name, what it is, and the tools it answers. */
export interface HandInfo {
  name: string;
  kind: string;
  description: string;
  tools: string[];
  /** Definitions of tools only this kind has (e.g. `screenshot`). */
  extraTools: KindTool['definition'][];
  /** What the model must know about this hand's commands (e.g. that they are not sandboxed). */
  notice?: string;
}

/** One hand a session holds, with its environment's config (undefined when that was deleted). */
interface HandSpec extends HandMember {
  config: ({ type: string } & Record<string, unknown>) | undefined;
}

/** Options of the registry. */
export interface HandRegistryOptions {
  log: SessionLog;
  environments: EnvironmentStore;
  dataDir: string;
  /** Per-session work folders live here; outside the data folder. */
  workRoot: string;
  /** Further folders a `local` environment's working_dir may name (default: none beyond the work root). */
  allowedWorkRoots?: readonly string[];
  /** `false` turns the local hands' sandbox off for this host, on purpose (default: on). */
  sandbox?: boolean;
  /** Remote kinds by config type (ssh, docker, adb). `local` is built in. */
  kinds: Record<string, RemoteHandKind<any>>;
  /** Where provisioning failures and lost hands are logged. */
  logger?: Logger;
  /** The host's git proxy: repositories with a token in the session's vaults are cloned and reached through it. */
  git?: RepoRouter;
  /** Variables from the vault (environment_variable placeholders, the egress proxy) for the session's hands. */
  handEnv?: HandEnvSource;
  /** A fresh redactor of the vault's values for each full output kept in DATA/outputs (undefined: nothing to redact). */
  redactStream?: () => TextFilter | undefined;
  /** The self-hosted worker protocol: `self_hosted` hands are machines that dial in (hands/dial-in). */
  dialIn?: DialIn;
  /** Hands made ahead per environment id or name (hand-pool.ts); absent or empty: each hand is made when first used. */
  poolSizes?: Record<string, number>;
}

/**
 * The hands sessions hold. A hand is provisioned the first time the model calls a tool on it
 * (never when a session starts), its lifecycle is written to the session's log, and a hand that
 * dies is dropped: the next call provisions a fresh one from the recipe.
 */
export class HandRegistry {
  private readonly live = new LiveHands();
  private readonly routes = new VaultRoutes();
  /** Why a session's remote hand was lost, until its replacement is provisioned. */
  private readonly lostShells = new Map<string, string>();
  /** Calls running now per `session\0hand`: a hand in a running call is not handed over. */
  private readonly busy = new Map<string, number>();
  private readonly members: HandMembership;
  private readonly places: LocalPlaces;
  private readonly ledger: ProcessGroupLedger;
  /** The sandbox's availability once known (found in the background at start). */
  private sandboxKnown: SandboxState | undefined;
  /** Settles once whether local commands can be sandboxed is known (tool descriptions say it). */
  readonly sandboxChecked: Promise<void>;
  /** The warm pool of hands made ahead (empty unless sizes were given). */
  readonly pool: HandPool;
  /** Deleted sessions' hands and folders being ended (awaited by disposeAll). */
  private readonly ending = new Set<Promise<unknown>>();
  private readonly offDeleted: () => void;

  constructor(private readonly opts: HandRegistryOptions) {
    this.members = new HandMembership(opts.log);
    // A deleted session's hands go at once (its container, its connection, its shell's jobs),
    // with the folders that were its own: nothing of it is left running or taking space.
    this.offDeleted = opts.log.subscribeSessions((change) => {
      if (change.kind !== 'deleted') return;
      const ended = endHands(this.live.takeSession(change.sessionId))
        .then(() => fs.promises.rm(this.workDirOf(change.sessionId), { recursive: true, force: true }))
        .catch(() => {})
        .finally(() => this.ending.delete(ended));
      this.ending.add(ended);
    });
    this.places = { dataDir: opts.dataDir, workRoot: opts.workRoot, allowedWorkRoots: opts.allowedWorkRoots };
    checkWorkRoot(this.places);
    fs.mkdirSync(opts.workRoot, { recursive: true, mode: 0o700 });
    this.ledger = new ProcessGroupLedger(pgroupDir(opts.dataDir));
    this.pool = new HandPool({ environments: opts.environments, kinds: opts.kinds, sizes: opts.poolSizes ?? {}, logger: opts.logger, sshKeys: opts.handEnv?.sshKeys?.bind(opts.handEnv) });
    this.pool.start();
    if (opts.sandbox === false) {
      this.sandboxKnown = { enabled: false, reason: 'the sandbox is turned off for this host', on_purpose: true };
      this.sandboxChecked = Promise.resolve();
    } else {
      this.sandboxChecked = sandboxAvailability().then((a) => {
        this.sandboxKnown = a.ok ? { enabled: true, network: '' } : { enabled: false, reason: a.reason, on_purpose: false };
        if (!a.ok) opts.logger?.warn({ reason: a.reason }, 'commands on local hands will run WITHOUT a sandbox');
      });
    }
  }

  /** The session's work folder on this machine (the local main hand's). */
  workDirOf(sessionId: string): string {
    return path.join(this.opts.workRoot, sessionId);
  }

  /** Why a `local` environment may not use `dir` as its working_dir (undefined: it may). */
  workingDirProblem(dir: unknown): string | undefined {
    return workingDirProblem(this.places, dir);
  }

  /** How a local hand with this config runs its commands, as far as is known now. */
  private localSandbox(config: Record<string, unknown> | undefined): SandboxState | undefined {
    if (config?.sandbox === false) return { enabled: false, reason: 'the sandbox is turned off for this environment (sandbox: false)', on_purpose: true };
    const known = this.sandboxKnown;
    if (known?.enabled) return { enabled: true, network: describeNetworkOf(sandboxPolicy(this.places, (config ?? {}) as LocalConfig).allowedHosts) };
    return known;
  }

  /** The hands the session holds, for tool descriptions. */
  list(sessionId: string): HandInfo[] {
    return this.specs(sessionId).map((spec) => {
      const type = spec.config?.type ?? 'missing';
      const kind = this.opts.kinds[type];
      const local = type === 'local' ? this.localSandbox(spec.config) : undefined;
      const localDir = String(spec.config?.working_dir ?? (spec.name === MAIN_HAND ? this.workDirOf(sessionId) : path.join(this.workDirOf(sessionId), spec.name)));
      return {
        name: spec.name,
        kind: type,
        description: type === 'local' ? describeLocal(localDir, local) : kind ? kind.describe(spec.config) : type === 'self_hosted' && this.opts.dialIn ? 'a machine that dials in: a self-hosted worker runs the tools there' : `unavailable (${type})`,
        tools: [...BUILTIN_TOOL_NAMES, ...(kind?.extraTools ?? []).map((t) => t.definition.name)],
        extraTools: (kind?.extraTools ?? []).map((t) => t.definition),
        ...(type === 'local' && sandboxNotice(local) ? { notice: sandboxNotice(local) } : {}),
      };
    });
  }

  /** Runs a tool on one of the session's hands (the only one, or the one named). */
  async execute(sessionId: string, handName: string | undefined, tool: string, input: Record<string, unknown>, opts: ExecuteOptions & { toolUseId?: string } = {}): Promise<ToolOutcome> {
    const specs = this.specs(sessionId);
    const name = handName ?? (specs.length === 1 ? specs[0]!.name : MAIN_HAND);
    const spec = specs.find((s) => s.name === name);
    if (!spec) return { content: `This session has no hand named '${name}'. Its hands: ${specs.map((s) => s.name).join(', ')}.`, isError: true };
    const busyKey = `${sessionId}\u0000${name}`;
    this.busy.set(busyKey, (this.busy.get(busyKey) ?? 0) + 1);
    try {
      return await this.executeOn(sessionId, name, spec, tool, input, opts);
    } finally {
      const n = (this.busy.get(busyKey) ?? 1) - 1;
      if (n > 0) this.busy.set(busyKey, n);
      else this.busy.delete(busyKey);
    }
  }

  private async executeOn(sessionId: string, name: string, spec: HandSpec, tool: string, input: Record<string, unknown>, opts: ExecuteOptions & { toolUseId?: string }): Promise<ToolOutcome> {
    // A machine that dials in runs the call itself (it watches the log); the host waits for its answer.
    if (spec.config?.type === 'self_hosted' && this.opts.dialIn && spec.environmentId) {
      return callThroughWorker(this.opts.dialIn, { sessionId, environmentId: spec.environmentId, hand: name, toolUseId: opts.toolUseId, signal: opts.signal, timeoutMs: Math.min(opts.timeoutMs ?? CALL_TIMEOUT_MS, CALL_TIMEOUT_MS) });
    }
    let got;
    try {
      got = await this.provisioned(sessionId, spec, opts.signal);
    } catch (err) {
      return { content: `Could not provision the hand '${name}': ${err instanceof Error ? err.message : String(err)}`, isError: true, details: { provision_failed: true } };
    }
    const ctrl = new AbortController();
    const onAbort = () => ctrl.abort();
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    const timer = setTimeout(() => ctrl.abort(), Math.min(opts.timeoutMs ?? CALL_TIMEOUT_MS, CALL_TIMEOUT_MS));
    try {
      if (opts.signal?.aborted) ctrl.abort();
      const extra = got.extra.find((t) => t.definition.name === tool);
      const run = extra && got.shell ? extra.run(got.shell, input, { signal: ctrl.signal }) : got.hand.execute(tool, input, { signal: ctrl.signal, timeoutMs: opts.timeoutMs });
      const outcome = await run.finally(() => got.endFirstCall?.());
      return await keepFullOutput(path.join(this.opts.dataDir, 'outputs', sessionId), opts.toolUseId, { ...outcome, details: { ...outcome.details, hand: name } }, this.opts.redactStream);
    } finally {
      clearTimeout(timer);
      opts.signal?.removeEventListener('abort', onAbort);
    }
  }

  /**
   * Attaches another environment's hand to a session under a name (a lease starts). Refused
   * (HandRequestError) for an unknown or archived environment or a name the session already uses.
   */
  attach(sessionId: string, environmentId: string, name: string): void {
    this.opts.log.getSession(sessionId);
    const env = this.opts.environments.get(environmentId);
    if (!env) throw new HandRequestError('not_found', `environment '${environmentId}' was not found`);
    if (env.archived_at) throw new HandRequestError('invalid', `environment '${environmentId}' is archived`);
    if (this.members.find(sessionId, name)) throw new HandRequestError('invalid', `the session already has a hand named '${name}'`);
    this.record(sessionId, { type: 'hand.attached', hand: name, environment_id: environmentId });
  }

  /** Releases a hand the session holds (a live one is disposed) and records it. */
  async release(sessionId: string, name: string): Promise<void> {
    if (!this.members.find(sessionId, name)) throw new HandRequestError('not_found', `hand '${name}' was not found`);
    const live = this.live.delete(sessionId, name);
    this.record(sessionId, { type: 'hand.released', hand: name });
    if (live) await live.ready.then((g) => g.hand.dispose()).catch(() => {});
  }

  /**
   * Passes a hand, live as it is, from one session to another: the giver's log records the
   * handover, the receiver's the arrival; one session uses a hand at a time.
   */
  handOver(fromSession: string, name: string, toSession: string, asName: string): void {
    this.opts.log.getSession(toSession);
    const member = this.members.find(fromSession, name);
    if (!member) throw new HandRequestError('not_found', `hand '${name}' was not found`);
    if (fromSession === toSession) throw new HandRequestError('invalid', 'a hand cannot be handed over to the session that holds it');
    if (this.members.find(toSession, asName)) throw new HandRequestError('invalid', `session ${toSession} already has a hand named '${asName}'`);
    if (this.busy.get(`${fromSession}\u0000${name}`)) {
      throw new HandRequestError('invalid', `hand '${name}' is busy running a tool call in session ${fromSession}; hand it over once the call has finished`);
    }
    const live = this.live.get(fromSession, name);
    if (live) this.routes.checkHandOver(live, name, fromSession, toSession);
    this.live.delete(fromSession, name);
    if (live) {
      // The same live hand, now held by the other session.
      live.sessionId = toSession;
      live.name = asName;
      this.live.set(live);
    }
    this.record(fromSession, { type: 'hand.handed_over', hand: name, to_session_id: toSession, to_hand: asName });
    this.record(toSession, { type: 'hand.received', hand: asName, environment_id: member.environmentId, from_session_id: fromSession, from_hand: name, live: Boolean(live) });
  }

  async disposeAll(): Promise<void> {
    this.members.close();
    await this.pool.stop();
    this.offDeleted();
    await Promise.allSettled([...this.live.takeAll().map((l) => l.ready.then((g) => g.hand.dispose())), ...this.ending]);
  }

  /** Writes a membership event and applies it to the session's hands. */
  private record(sessionId: string, event: { type: (typeof HAND_MEMBERSHIP_EVENTS)[number]; hand: string; [k: string]: unknown }): void {
    this.opts.log.emitEvent(sessionId, event);
    this.members.apply(sessionId, event);
  }

  /** The session's hands with their environments' configs, looked up now (they may change). */
  private specs(sessionId: string): HandSpec[] {
    return this.members.of(sessionId).map((m) => ({
      ...m,
      config: m.environmentId ? (this.opts.environments.get(m.environmentId)?.record.config as HandSpec['config']) : { type: 'local' },
    }));
  }

  private provisioned(sessionId: string, spec: HandSpec, signal?: AbortSignal): Live['ready'] {
    let live = this.live.get(sessionId, spec.name);
    if (!live) {
      const fresh: Live = { sessionId, name: spec.name, ready: Promise.resolve() as never };
      fresh.ready = this.provision(spec, fresh, signal);
      this.routes.provisioning(fresh, fresh.ready);
      this.live.set(fresh);
      // A failed provisioning is not kept: the next call tries again.
      fresh.ready.catch(() => this.live.forget(fresh));
      live = fresh;
    }
    return live.ready;
  }

  /** Where each live main hand takes resources (for resources added to its session later). */
  private readonly targets = new WeakMap<Live, ResourceTarget>();
  private keepTarget(live: Live, target: ResourceTarget): ResourceTarget {
    const kept = { ...target, applied: new Set<string>(), onProxyRemote: () => this.routes.mark(live, "a clone on it has the session's git proxy as its remote") };
    this.targets.set(live, kept);
    return kept;
  }

  /**
   * Applies a resource just added to a session onto its main hand if that hand is provisioned
   * (or being provisioned: then once it is ready). Resolves false when the session holds no live
   * main hand: its next provisioning applies every resource of the record, this one included.
   */
  async applyAddedResource(sessionId: string, resourceId: string): Promise<boolean> {
    const live = this.live.get(sessionId, MAIN_HAND);
    if (!live) return false;
    const ready = await live.ready.then(() => true, () => false);
    const target = this.targets.get(live);
    if (!ready || !target || this.live.get(sessionId, MAIN_HAND) !== live) return false;
    await applyResources(this.opts.log, sessionId, MAIN_HAND, target, undefined, resourceId);
    return true;
  }

  private async provision(spec: HandSpec, live: Live, signal?: AbortSignal): Live['ready'] {
    const { log } = this.opts;
    const sessionId = live.sessionId;
    const type = spec.config?.type;
    const started = Date.now();
    log.emitEvent(sessionId, { type: 'hand.provisioning', hand: spec.name, kind: type ?? 'missing' });
    let opened: RemoteShell | undefined;
    let endFirstCall: (() => void) | undefined;
    try {
      if (!spec.config) throw new Error(`its environment ${spec.environmentId} no longer exists`);
      let got: Awaited<Live['ready']>;
      let description: string;
      let workDir: string;
      let facts: Record<string, unknown> | undefined;
      let pooled: PooledHand | undefined;
      const progress = progressToLog(log, sessionId, spec.name);
      if (type === 'local') {
        const config = spec.config as Record<string, unknown> & LocalConfig;
        if (config.working_dir !== undefined) {
          // Checked when the environment was saved; again here, since the host's roots may have changed.
          const problem = this.workingDirProblem(config.working_dir);
          if (problem) throw new Error(`working_dir ${problem}`);
        }
        workDir = typeof config.working_dir === 'string' ? config.working_dir : spec.name === MAIN_HAND ? this.workDirOf(sessionId) : path.join(this.workDirOf(sessionId), spec.name);
        const off = this.opts.sandbox === false ? 'the sandbox is turned off for this host' : config.sandbox === false ? 'the sandbox is turned off for this environment (sandbox: false)' : undefined;
        const policy = off ? false : await withSandboxNet(sandboxPolicy(this.places, config), this.opts.handEnv, sessionId);
        if (policy && policy.net) this.routes.mark(live, "its sandbox holds the session's gateway to its proxies");
        const env = { ...(config.env as Record<string, string> | undefined), ...(await this.opts.handEnv?.envFor(sessionId, localReach(!off))) };
        this.routes.markEnv(live, env);
        const hand = createLocalHand({
          workDir,
          sandbox: policy,
          sandboxOffReason: off,
          tmpDir: path.join(this.opts.workRoot, '.tmp', `${sessionId}-${spec.name}`),
          env,
          ledger: this.ledger,
        });
        const sandbox = await hand.sandboxState();
        got = { hand, extra: [] };
        description = describeLocal(workDir, sandbox);
        facts = { sandbox };
      } else {
        const kind = type ? this.opts.kinds[type] : undefined;
        if (!kind) throw new Error(`an environment of type '${type}' cannot run here (Corral runs local, ssh, docker and adb hands)`);
        const label = `${sessionId}/${spec.name}`;
        pooled = await takePooledHand(this.pool, { log, git: this.opts.git, sessionId, hand: spec.name, environmentId: spec.environmentId ?? undefined, config: spec.config });
        if (!pooled) progress({ phase: 'connecting' });
        else endFirstCall = firstCallStarted(); // its session's first call is under way: what can wait does (first-calls.ts)
        const sshKeys = this.opts.handEnv?.sshKeys?.bind(this.opts.handEnv);
        const shell = (opened = pooled?.shell ?? (await kind.connect(spec.config, { signal, label, vaultKeys: sshKeys && ((host) => sshKeys(sessionId, host)) })));
        const base = shell.workDir ?? kind.defaultWorkDir(spec.config);
        workDir = pooled?.workDir ?? (typeof spec.config.working_dir === 'string' ? spec.config.working_dir : await sessionWorkDir(shell, type!, base, sessionId, spec.name, signal));
        live.ownDir = ownFolder(type!, { pooled: Boolean(pooled), workDir, base, sessionId, configured: typeof spec.config.working_dir === 'string' });
        description = kind.describe(spec.config);
        const env = { ...(spec.config.env as Record<string, string> | undefined), ...(await this.opts.handEnv?.envFor(sessionId, async (p) => shell.reachHost?.(p), placeCaOnShell(shell, type === 'docker'))) };
        this.routes.markEnv(live, env);
        // A hand replacing one that was lost says so in its shell's first result (its state is gone).
        const lostKey = `${sessionId}\u0000${spec.name}`;
        const replacedLost = this.lostShells.get(lostKey);
        this.lostShells.delete(lostKey);
        got = { hand: createShellHand(shell, { workDir, label: `${spec.name} (${description})`, env, replacedLost, adoptShell: pooled?.adoptShell }), shell, extra: kind.extraTools ?? [] };
        shell.onLost((reason) => {
          this.lostShells.set(`${live.sessionId}\u0000${live.name}`, reason);
          // Never nursed back: dropped, so the next call provisions a fresh one. The log of
          // whichever session holds the hand now records it.
          this.live.forget(live);
          this.opts.logger?.warn({ session_id: live.sessionId, hand: live.name, kind: type, reason }, 'hand lost');
          if (log.findSession(live.sessionId)) log.emitEvent(live.sessionId, { type: 'hand.lost', hand: live.name, reason });
        });
      }
      // The session's own resources (repositories) go onto its main hand as it is made.
      if (spec.name === MAIN_HAND) await applyResources(log, sessionId, spec.name, this.keepTarget(live, { hand: got.hand, shell: got.shell, workDir, git: this.opts.git, onProgress: progress, preApplied: pooled?.preApplied }), signal);
      log.emitEvent(sessionId, { type: 'hand.ready', hand: spec.name, kind: type, description, duration_ms: Date.now() - started, ...got.shell?.facts, ...facts, ...(pooled ? { from_pool: true } : {}) });
      return endFirstCall ? { ...got, endFirstCall } : got;
    } catch (err) {
      endFirstCall?.();
      void opened?.close().catch(() => {}); // connected, then failed: its connection or container goes too
      this.opts.logger?.warn({ session_id: sessionId, hand: spec.name, kind: type ?? 'missing', error: err instanceof Error ? err.message : String(err) }, 'hand provisioning failed');
      log.emitEvent(sessionId, { type: 'hand.lost', hand: spec.name, reason: `provisioning failed: ${err instanceof Error ? err.message : String(err)}` });
      throw err;
    }
  }
}
