import path from 'node:path';
import { AgentStore } from './catalog/agents';
import { EnvironmentStore } from './catalog/environments';
import { lockDataDir } from './data-lock';
import { resolveWorkRoot, secureDataDir } from './data-dir';
import { killOrphanGroups } from './hands/pgroups';
import { openDatabase } from './session/db';
import { SessionLog } from './session/store';
import { BrainSupervisor, type SupervisorOptions } from './brain/supervisor';
import { parseHandPoolSizes } from './hands/hand-pool';
import { HandRegistry } from './hands/registry';
import type { RemoteHandKind } from './hands/remote/types';
import { adbHandKind } from './hands/adb';
import { ContainerRecords, containerRecordDir, createDockerHandKind, sweepLeftContainers, takeContainerRecords } from './hands/docker';
import { sshHandKindWithTrustStore } from './hands/ssh';
import { redactingHands, redactingLog, startHostVault, type HostVaultOptions, type Vault, type VaultKeyWrapper } from './vault';
import type { ModelProxy } from './vault/model-proxy';
import { heldBlockText, USER_TURN_TYPES } from './brain/held-fill';
import { environmentKeyVault } from './vault/environment-keys';
import { silentLogger, type Logger } from './logging/logger';
import { McpSessions } from './mcp/sessions';
import { logSessionLifecycle } from './logging/session-lifecycle';
import { WorkStore } from './catalog/work';
import { DialIn } from './hands/dial-in/service';

/** How to start a host. */
export interface HostOptions {
  /** The data folder: the database and the server's key live here. */
  dataDir: string;
  /** better-sqlite3 addon for a non-Node ABI (the desktop app's Electron build). */
  nativeBinding?: string;
  /**
   * Run brains for sessions with work (the app and `serve` do; API-only tests do not).
   * An object passes supervisor options (e.g. how to spawn a brain).
   */
  brains?: boolean | Pick<SupervisorOptions, 'spawn' | 'maxRestartsPerMinute' | 'beforeFirstBrain'>;
  /** Remote hand kinds by environment type; default: ssh, docker and adb. */
  handKinds?: Record<string, RemoteHandKind<any>>;
  /** Who this host is, for the error another host gets on the same data folder. */
  what?: string;
  /**
   * The vault's key: a passphrase (default `CORRAL_VAULT_PASSPHRASE`, taken out of the
   * environment once read), else the key file `DATA/vault.key`, which the desktop app wraps
   * with the OS keychain (`keyWrapper`). `egress`: the egress proxy's extra upstream trust and
   * loopback targets (tests).
   */
  vault?: { passphrase?: string; keyWrapper?: VaultKeyWrapper; env?: NodeJS.ProcessEnv; egress?: HostVaultOptions['egress'] };
  /**
   * Where the host logs requests, session lifecycles, brain and hand failures
   * (`createLogger`); default silent, so tests stay quiet.
   */
  logger?: Logger;
  /** Per-session work folders (default: `CORRAL_WORK_ROOT`, else beside the data folder; see data-dir.ts). */
  workRoot?: string;
  /** Further folders `local` environments may name as working_dir. */
  allowedWorkRoots?: string[];
  /** `false` runs local hands without the sandbox, on purpose (default: on unless CORRAL_SANDBOX=off). */
  sandbox?: boolean;
  /** Hands made ahead per environment id or name (default: `CORRAL_HAND_POOL`, "ENV=N,…"; unset: none). */
  handPool?: Record<string, number>;
}

/**
 * The host: everything the desktop app's main process and the headless server share. Plain
 * Node; the Electron shell and `serve` each compose one.
 */
export interface Host {
  readonly dataDir: string;
  /** The host's own log (pino), not to be confused with `log`, the session log. */
  readonly logger: Logger;
  readonly log: SessionLog;
  readonly agents: AgentStore;
  readonly environments: EnvironmentStore;
  readonly hands: HandRegistry;
  /** The self-hosted worker protocol (environment keys, work items, leases). */
  readonly dialIn: DialIn;
  /** Credentials, sealed; `vault.ready` rejects when the key cannot be had (a wrong passphrase). */
  readonly vault: Vault;
  /** Where brains send model requests (with a capability, never a key). */
  readonly modelProxy: ModelProxy;
  /** Present when the host runs brains. */
  readonly brains?: BrainSupervisor;
  /** Settles once brains run (they wait for the vault's key and the model proxy). */
  readonly started: Promise<void>;
  close(): Promise<void>;
}

export function createHost(opts: HostOptions): Host {
  const unlock = lockDataDir(opts.dataDir, opts.what ?? `a Corral host (${path.basename(process.argv[1] ?? 'node')})`);
  try {
    return composeHost(opts, unlock);
  } catch (err) {
    unlock();
    throw err;
  }
}

function composeHost(opts: HostOptions, unlock: () => void): Host {
  // Private files from here on, and no command left running by a host that died.
  secureDataDir(opts.dataDir);
  killOrphanGroups(opts.dataDir);
  // Read before any hand is made: every container on record now is a dead host's.
  const leftContainers = takeContainerRecords(opts.dataDir);
  const db = openDatabase({ file: path.join(opts.dataDir, 'corral.sqlite'), nativeBinding: opts.nativeBinding });
  const logger = opts.logger ?? silentLogger();
  const log = new SessionLog(db);
  const stopLifecycleLog = logSessionLifecycle(log, logger);
  const containerSweep = sweepLeftContainers(opts.dataDir, leftContainers, logger);
  const agents = new AgentStore(db);
  const environments = new EnvironmentStore(db);
  const secrets = startHostVault({
    db,
    log,
    dataDir: opts.dataDir,
    passphrase: opts.vault?.passphrase ?? takeEnvPassphrase(),
    keyWrapper: opts.vault?.keyWrapper,
    env: opts.vault?.env,
    egress: opts.vault?.egress,
    // Brains send their next request ahead while a tool runs; the proxy fills it as the result is logged.
    heldFill: { render: heldBlockText, userTurnTypes: USER_TURN_TYPES },
  });
  // Brains and hands write through a view of the log that redacts the vault's values.
  const writerLog = redactingLog(log, secrets.vault);
  const dialIn = new DialIn({ work: new WorkStore(db), log: writerLog, environments, logger, keyVault: environmentKeyVault(secrets.vault) });
  const hands = new HandRegistry({
    log: writerLog,
    environments,
    dataDir: opts.dataDir,
    workRoot: opts.workRoot ?? resolveWorkRoot(undefined, opts.dataDir),
    allowedWorkRoots: opts.allowedWorkRoots,
    sandbox: opts.sandbox ?? process.env.CORRAL_SANDBOX !== 'off',
    kinds: opts.handKinds ?? defaultHandKinds(opts.dataDir),
    logger,
    git: secrets.gitProxy,
    handEnv: secrets.handEnv,
    redactStream: () => (secrets.vault.redactor.active ? secrets.vault.redactor.stream() : undefined),
    dialIn,
    poolSizes: opts.handPool ?? parseHandPoolSizes(process.env.CORRAL_HAND_POOL),
  });
  // The host's MCP client: connections and tokens stay here; brains see tools and results.
  const workRoot = opts.workRoot ?? resolveWorkRoot(undefined, opts.dataDir);
  const sandboxOn = opts.sandbox ?? process.env.CORRAL_SANDBOX !== 'off';
  const mcp = new McpSessions({ log: writerLog, vault: secrets.vault, sandbox: { enabled: sandboxOn, denyRead: [opts.dataDir, workRoot] } });
  const brains = opts.brains
    ? new BrainSupervisor({
        mcp,
        log: writerLog,
        hands: redactingHands(hands, secrets.vault),
        logger,
        redactDelta: (sessionId, delta) => secrets.vault.redactDelta(sessionId, delta),
        ...(typeof opts.brains === 'object' ? opts.brains : {}),
      })
    : undefined;
  if (brains) secrets.vault.setLiveTailSink((sessionId, delta) => brains.pushDelta(sessionId, delta as never));
  // Brains start once the model proxy listens (their capability names its port), the key is
  // open and the local sandbox is checked (the bash tool's description says whether commands are
  // sandboxed); sessions with input that arrived meanwhile are found by start() itself.
  let closed = false;
  const started = Promise.allSettled([secrets.vault.ready, secrets.modelProxy.listening, hands.sandboxChecked]).then(() => {
    if (!closed) brains?.start();
  });
  logger.info({ data_dir: opts.dataDir, brains: Boolean(brains) }, 'host started');
  return {
    dataDir: opts.dataDir,
    logger,
    log,
    agents,
    environments,
    hands,
    dialIn,
    vault: secrets.vault,
    modelProxy: secrets.modelProxy,
    brains,
    started,
    close: async () => {
      closed = true;
      try {
        await brains?.stop();
        await hands.disposeAll();
        await containerSweep;
        await mcp.close();
        await secrets.close();
        stopLifecycleLog();
        log.close();
        logger.info('host stopped');
      } finally {
        unlock();
      }
    },
  };
}

/** The remote hand kinds this build knows. */
function defaultHandKinds(dataDir: string): Record<string, RemoteHandKind<any>> {
  return { ssh: sshHandKindWithTrustStore(path.join(dataDir, 'ssh', 'known_hosts')), docker: createDockerHandKind(new ContainerRecords(containerRecordDir(dataDir))), adb: adbHandKind };
}

/** The passphrase from the environment, removed from it so no child process inherits it. */
function takeEnvPassphrase(): string | undefined {
  const p = process.env.CORRAL_VAULT_PASSPHRASE;
  delete process.env.CORRAL_VAULT_PASSPHRASE;
  return p || undefined;
}
