/**
 * The local hand's sandbox: Anthropic's sandbox runtime (`@anthropic-ai/sandbox-runtime`),
 * bubblewrap on Linux and `sandbox-exec` on macOS. Each bash call runs in it with:
 *
 * - the whole filesystem read-only, and only the hand's work folder (and a private temporary
 *   folder) writable;
 * - the folders the host names unreadable (its data folder, the other sessions' work folders)
 *   together with the usual secret stores under the home folder (SECRET_STORES);
 * - its own PID namespace (Linux): the host and every other process are invisible, so no
 *   `/proc/<pid>/environ` of theirs can be read;
 * - no network of its own: its only way out is the runtime's proxy in the host, which lets
 *   through only the hosts the environment allows and never connects to loopback, link-local or
 *   cloud-metadata addresses, or to this machine's own addresses; a session's git and egress
 *   proxies are reached through the host's sandbox gateway (sandbox-relays.ts), by names only
 *   this command's allow list holds;
 * - no new Unix sockets (seccomp), so the Docker, adb or agent sockets on this machine are out
 *   of reach too.
 *
 * The runtime keeps one configuration per process: the host initializes it once, on a thread of
 * its own (sandbox-thread.ts: the runtime works synchronously, which stalled the host's event
 * loop 15–30 ms, up to 50, at each sandboxed shell start), and each command carries its own
 * filesystem rules and its own network allow list (registered under a random id for the
 * duration of the command).
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { SandboxRuntimeConfig } from '@anthropic-ai/sandbox-runtime';
import { GATEWAY_DOMAIN, relayAllowList, relayScript, type SandboxNet } from './sandbox-relays';
import { commandEnv } from '../../child-env';
import type { SandboxInitReply, WrapReply } from './sandbox-thread-protocol';
import { askSandboxThread, tellSandboxThread } from './sandbox-thread';

/** What one sandboxed hand may do beyond its own folder. */
export interface SandboxPolicy {
  /** Paths commands may not read (the host's data folder, other sessions' folders, …). */
  denyRead: readonly string[];
  /** Hosts reachable through the proxy (`example.com`, `*.example.com`, optional `:port`). */
  allowedHosts: readonly string[];
  /** The session's routes to the host's git and egress proxies (sandbox-relays.ts), if any. */
  net?: SandboxNet;
}

/** How the hand runs its commands, for its description and the log. */
export type SandboxState =
  | { enabled: true; network: string }
  | { enabled: false; reason: string; on_purpose: boolean };

/** Secret stores under the home folder (and a few system files) every sandboxed command is denied. */
export const SECRET_STORES: readonly string[] = [
  '.ssh', '.gnupg', '.aws', '.azure', '.config/gcloud', '.kube', '.docker', '.netrc', '.git-credentials',
  '.config/git/credentials', '.npmrc', '.yarnrc', '.yarnrc.yml', '.pypirc', '.pgpass', '.my.cnf',
  '.cargo/credentials', '.cargo/credentials.toml', '.config/gh', '.config/hub', '.password-store',
  '.local/share/keyrings', '.vault-token', '.terraform.d', '.config/op', '.oci', '.config/doctl',
  '.config/Corral', '.anthropic', '.claude', '.claude.json', '.config/anthropic',
  '.mozilla', '.config/google-chrome', '.config/chromium', '.config/BraveSoftware',
  '.bash_history', '.zsh_history', '.python_history', '.psql_history', '.mysql_history', '.node_repl_history',
  'Library/Keychains', 'Library/Application Support/Corral', 'Library/Cookies',
];

/** The paths every sandboxed command is denied: the secret stores in `home`, and the system's own. */
export function deniedSecretPaths(home: string = os.homedir()): string[] {
  const out = SECRET_STORES.map((p) => path.join(home, p));
  out.push('/etc/shadow', '/etc/gshadow', '/etc/sudoers', '/etc/sudoers.d', '/etc/master.passwd');
  try {
    for (const name of fs.readdirSync('/etc/ssh')) if (/^ssh_host_.*_key$/.test(name)) out.push(path.join('/etc/ssh', name));
  } catch {
    // No /etc/ssh here.
  }
  return out;
}

/**
 * The environment of a shell this host starts for a local hand (the hand's shell, the probe
 * below): the allowlisted `commandEnv`, and SHLVL=1. Node's stdio pipes are socketpairs, and
 * bash (Debian builds it so) reads ~/.bashrc when its stdin is a socket and SHLVL is unset,
 * taking itself for a child of sshd; the sandbox runtime starts `bash -c`. The user's .bashrc
 * then ran at every start: a pyenv init there cost 1.9 s of each, and once a pyenv rehash
 * waited 60 s on a lock in the read-only home, so the shell's first marker never came.
 */
export function localShellEnv(configured?: Record<string, string>): Record<string, string> {
  return { ...commandEnv(configured), SHLVL: '1' };
}

let availability: Promise<{ ok: true } | { ok: false; reason: string }> | undefined;

let gatewayDir: string | undefined;

/**
 * The Unix socket the runtime sends gateway names to (sandbox-relays.ts), one per process in a
 * private folder: the host's sandbox gateway listens there (main/vault/sandbox-gateway.ts).
 */
export function gatewaySocketPath(): string {
  if (!gatewayDir) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'corral-gw-'));
    gatewayDir = dir;
    // The folder is this process's alone; nothing is left of it once the process ends.
    process.once('exit', () => fs.rmSync(dir, { recursive: true, force: true }));
  }
  return path.join(gatewayDir, 'gw.sock');
}

/** The runtime's one configuration: nothing writable, no host allowed; each command says more. */
const BASE_CONFIG = (): SandboxRuntimeConfig => ({
  network: { allowedDomains: [], deniedDomains: [], mitmProxy: { socketPath: gatewaySocketPath(), domains: [`*.${GATEWAY_DOMAIN}`] } },
  filesystem: { denyRead: [], allowWrite: [], denyWrite: [] },
  // The runtime also protects dotfiles in the *host's* current folder, found with ripgrep; one
  // level is enough (the host's folder is never a work folder).
  mandatoryDenySearchDepth: 1,
});

/**
 * Whether commands can be sandboxed here, found once per process: the platform, the tools the
 * runtime needs (bubblewrap, socat, ripgrep on Linux) and a real sandboxed `true`.
 */
export function sandboxAvailability(): Promise<{ ok: true } | { ok: false; reason: string }> {
  availability ??= probe();
  return availability;
}

async function probe(): Promise<{ ok: true } | { ok: false; reason: string }> {
  if (process.platform !== 'linux' && process.platform !== 'darwin') {
    return { ok: false, reason: `no sandbox is available on ${process.platform} (Corral sandboxes commands on Linux and macOS)` };
  }
  // The runtime lives on its own thread (sandbox-runtime-worker.ts): it loads, checks its tools and starts there.
  let init: SandboxInitReply;
  try {
    init = await askSandboxThread<SandboxInitReply>({ op: 'init', config: BASE_CONFIG() });
  } catch (err) {
    return { ok: false, reason: `the sandbox runtime could not be started: ${(err as Error).message}` };
  }
  if (!init.ok) return init;
  // A real run: bubblewrap may be installed and still be refused user namespaces.
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'corral-sandbox-probe-'));
  try {
    const wrapped = await wrap('true', { workDir: dir, tmpDir: dir, policy: { denyRead: [], allowedHosts: [] } });
    // Asynchronous: the probe runs while the host already serves (a sync spawn stalled its loop).
    const r = await runOnce(wrapped.file, wrapped.args, dir);
    wrapped.release();
    if (r.status !== 0) {
      return { ok: false, reason: `a sandboxed test command failed (${r.error ?? `exit ${r.status}`}): ${r.stderr.trim().slice(0, 500)}` };
    }
  } catch (err) {
    return { ok: false, reason: `a sandboxed test command could not be prepared: ${(err as Error).message}` };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
  return { ok: true };
}

/** Runs a command to its end without blocking the event loop; 20 s at most. */
async function runOnce(file: string, args: string[], cwd: string): Promise<{ status: number | null; stderr: string; error?: string }> {
  const { execFile } = await import('node:child_process');
  return new Promise((resolve) => {
    const env = { PATH: '/usr/bin:/bin', ...localShellEnv() };
    execFile(file, args, { cwd, env, encoding: 'utf8', timeout: 20_000 }, (err, _stdout, stderr) => {
      if (!err) return resolve({ status: 0, stderr });
      const code = (err as { code?: unknown }).code;
      resolve({ status: typeof code === 'number' ? code : null, stderr: stderr ?? '', error: typeof code === 'number' ? undefined : err.message });
    });
  });
}

/** Quotes a string for bash. */
const shq = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/** A command ready to spawn in the sandbox; `release` once it has ended (or never started). */
export interface SandboxedCommand {
  file: string;
  args: string[];
  release(): void;
}

/**
 * Wraps `bash -c command` for the sandbox: writes only to `workDir` and `tmpDir` (TMPDIR),
 * reads everything except the policy's and the secret stores, reaches only the allowed hosts.
 * Call only after `sandboxAvailability()` said yes.
 */
export async function wrap(
  command: string,
  opts: { workDir: string; tmpDir: string; policy: SandboxPolicy; signal?: AbortSignal },
): Promise<SandboxedCommand> {
  const commandId = randomBytes(16).toString('base64url');
  const custom: Partial<SandboxRuntimeConfig> = {
    filesystem: {
      denyRead: [...deniedSecretPaths(), ...opts.policy.denyRead],
      // Readable again inside a denied root (the work root): needed on macOS, where a write
      // allowance does not lift a read denial; on Linux the write binds already do.
      allowRead: [opts.workDir, opts.tmpDir],
      allowWrite: [opts.workDir, opts.tmpDir],
      denyWrite: [],
    },
  };
  // The runtime sets TMPDIR to a folder every sandbox shares; ours is the hand's own.
  const inner = `export TMPDIR=${shq(opts.tmpDir)}; ${opts.policy.net ? relayScript(opts.policy.net) : ''}${command}`;
  const allowed = [...opts.policy.allowedHosts, ...relayAllowList(opts.policy.net)];
  const { argv, registered } = await askSandboxThread<WrapReply>({ op: 'wrap', inner, custom, cwd: opts.workDir, commandId, commandText: command, allowed }, opts.signal);
  let released = false;
  return {
    file: argv[0]!,
    args: argv.slice(1),
    release: () => {
      if (released) return;
      released = true;
      tellSandboxThread({ op: 'release', commandId, registered });
    },
  };
}

/**
 * Package registries (and GitHub, where many packages and repositories come from): what a
 * `local` environment reaches by default, and with `allow_package_managers: true`.
 */
export const PACKAGE_MANAGER_HOSTS: readonly string[] = [
  'registry.npmjs.org', 'registry.yarnpkg.com', 'pypi.org', 'files.pythonhosted.org', 'crates.io', 'static.crates.io',
  'index.crates.io', 'proxy.golang.org', 'sum.golang.org', 'rubygems.org', 'repo.maven.apache.org', 'repo1.maven.org',
  'github.com', 'codeload.github.com', 'objects.githubusercontent.com', 'raw.githubusercontent.com',
];

/** How the network looks from inside, in a few words. */
export function describeNetwork(policy: SandboxPolicy): string {
  if (policy.allowedHosts.length === 0) return 'no network';
  const registries = PACKAGE_MANAGER_HOSTS.every((h) => policy.allowedHosts.includes(h));
  const others = policy.allowedHosts.filter((h) => !registries || !PACKAGE_MANAGER_HOSTS.includes(h));
  const parts = [...(registries ? ['package registries and GitHub'] : []), ...(others.length <= 4 ? others : [`${others.length} allowed hosts`])];
  return `network only to ${parts.join(', ')}, through a proxy`;
}
