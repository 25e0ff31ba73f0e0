/**
 * Opening an SSH connection for a hand: resolve the config, load the keys on this machine,
 * check the host key against known_hosts, connect with keepalives, then learn the remote home
 * and make the work folder.
 */
import fs from 'node:fs';
import localPath from 'node:path';
import path from 'node:path/posix';
import * as ssh2 from 'ssh2';
import type { AnyAuthMethod, Client as ClientType } from 'ssh2';
import { shq } from '../remote/shell-hand';
import { resolveTarget, type ResolveOptions, type SshConfig, type SshTarget } from './config';
import { connectErrorFrom, SshConnectError } from './errors';
import { loadCredentials, type VaultSshKey } from './keys';
import { checkHostKey, hostKeyAlgorithmsFor, knownHostsName, lookupKnownHosts, type HostKeyVerdict } from './known-hosts';
import { SshShell } from './shell';

const Client: typeof ssh2.Client = ssh2.Client ?? (ssh2 as unknown as { default: typeof ssh2 }).default.Client;

export const READY_TIMEOUT_MS = 10_000;
/** A keepalive every second, two unanswered ones end the connection: a cut link is noticed in ~3 s. */
export const KEEPALIVE_INTERVAL_MS = 1_000;
export const KEEPALIVE_COUNT_MAX = 2;
export const DEFAULT_WORK_DIR_NAME = 'corral-work';

export interface SshConnectOptions extends ResolveOptions {
  signal?: AbortSignal;
  readyTimeoutMs?: number;
  keepaliveIntervalMs?: number;
  keepaliveCountMax?: number;
  /** For an encrypted key (e.g. from the vault). */
  passphrase?: string;
  /** ssh-agent socket; default SSH_AUTH_SOCK; false to never use an agent. */
  agent?: string | false;
  /**
   * Corral's own known_hosts file (OpenSSH's `accept-new`): checked with the others, and the key
   * of a host found in no file is added to it at the first connection, so a different key later
   * is refused as a mismatch. The user's files are never written.
   */
  trustStore?: string;
  /** The session's SSH keys from the vault for the resolved host name (offered first). */
  vaultKeys?: (host: string) => Promise<VaultSshKey[]>;
}

/** Where a config's work folder is, once the remote home is known. */
export function workDirFor(config: Pick<SshConfig, 'working_dir'>, home: string): string {
  const wd = config.working_dir;
  if (!wd) return path.join(home, DEFAULT_WORK_DIR_NAME);
  if (wd === '~') return home;
  if (wd.startsWith('~/')) return path.join(home, wd.slice(2));
  return path.isAbsolute(wd) ? path.normalize(wd) : path.join(home, wd);
}

export async function connectSsh(config: SshConfig, opts: SshConnectOptions = {}): Promise<SshShell> {
  if (opts.signal?.aborted) throw new SshConnectError('ABORTED', 'The connection was cancelled.');
  const target = await resolveTarget(config, opts);
  const vaultKeys = namedVaultKey(config, target.host, (await opts.vaultKeys?.(target.host)) ?? []);
  const creds = loadCredentials(target.identityFiles, target.user, { passphrase: opts.passphrase, agent: opts.agent, vaultKeys });
  const label = `${target.user}@${target.host}:${target.port}`;
  const readyTimeout = opts.readyTimeoutMs ?? READY_TIMEOUT_MS;

  const client = await handshake(target, label, creds, readyTimeout, opts);
  // The ledger: a login with a vault key names the credential and the target, never the key.
  if (client.accepted) creds.vaultKeys?.get(client.accepted)?.used(`ssh ${label}`);
  if (opts.trustStore && !client.verdict.info.known) {
    try {
      recordHostKey(opts.trustStore, client.verdict.info.knownHostsLine);
      client.verdict.info.recordedIn = opts.trustStore;
    } catch (err) {
      // Not remembered (hand.ready then shows first_seen: false with known: false); the
      // connection itself is as good as before.
      console.warn(`corral: could not record the host key of ${label} in ${opts.trustStore}: ${(err as Error).message}`);
    }
  }
  const keepaliveWindowMs = (opts.keepaliveIntervalMs ?? KEEPALIVE_INTERVAL_MS) * ((opts.keepaliveCountMax ?? KEEPALIVE_COUNT_MAX) + 1);
  const shell = new SshShell(client.client, { label, hostKey: client.verdict.info, keepaliveWindowMs });
  try {
    await setUp(shell, config);
  } catch (err) {
    await shell.close();
    throw err;
  }
  return shell;
}

async function handshake(
  target: SshTarget,
  label: string,
  creds: ReturnType<typeof loadCredentials>,
  readyTimeout: number,
  opts: SshConnectOptions,
): Promise<{ client: ClientType; verdict: HostKeyVerdict; accepted?: AnyAuthMethod }> {
  const name = knownHostsName(target.hostKeyName, target.port);
  const entries = lookupKnownHosts(opts.trustStore ? [...target.knownHostsFiles, opts.trustStore] : target.knownHostsFiles, name);
  // When the host is known, ask for the key types on record, so a host that has several keys
  // shows the one we can check (as OpenSSH does).
  const knownAlgos = [...new Set(entries.filter((e) => !e.revoked).flatMap((e) => hostKeyAlgorithmsFor(e.type)))];
  const client = new Client();
  let verdict: HostKeyVerdict | undefined;
  // The methods in order, as ssh2's array form does; the last one handed out is the one accepted.
  const pending = [...creds.methods];
  let tried: AnyAuthMethod | undefined;

  return new Promise((resolve, reject) => {
    let done = false;
    const fail = (err: SshConnectError) => {
      if (done) return;
      done = true;
      opts.signal?.removeEventListener('abort', onAbort);
      client.removeAllListeners('ready');
      client.on('error', () => {}); // late errors of a connection we gave up on
      client.destroy();
      reject(err);
    };
    const onAbort = () => fail(new SshConnectError('ABORTED', `Connecting to ${label} was cancelled.`));
    opts.signal?.addEventListener('abort', onAbort, { once: true });

    // Without this, Nagle's algorithm and delayed ACKs add ~40 ms to every small exchange.
    client.once('connect', () => client.setNoDelay(true));
    client.once('ready', () => {
      if (done) return;
      done = true;
      opts.signal?.removeEventListener('abort', onAbort);
      client.removeAllListeners('error');
      client.removeAllListeners('close');
      resolve({ client, verdict: verdict!, accepted: tried });
    });
    client.on('error', (err: Error & { level?: string; code?: unknown }) => {
      if (verdict && !verdict.ok) return fail(new SshConnectError('HOST_KEY_MISMATCH', verdict.reason));
      if (err.level === 'client-authentication') {
        const skipped = creds.skipped.length ? ` Skipped: ${creds.skipped.join(', ')}.` : '';
        return fail(new SshConnectError('AUTH', `Authentication failed for ${label}: the server accepted none of ${creds.offered.join(', ')}.${skipped}`));
      }
      fail(connectErrorFrom(err, label, readyTimeout));
    });
    client.on('close', () => {
      if (verdict && !verdict.ok) return fail(new SshConnectError('HOST_KEY_MISMATCH', verdict.reason));
      fail(new SshConnectError('OTHER', `The connection to ${label} closed during the handshake.`));
    });

    try {
      client.connect({
        host: target.host,
        port: target.port,
        username: target.user,
        authHandler: (_left, _partial, next) => {
          tried = pending.shift();
          next(tried ?? (false as never)); // false: nothing left (ssh2 then reports the failure)
        },
        readyTimeout,
        keepaliveInterval: opts.keepaliveIntervalMs ?? KEEPALIVE_INTERVAL_MS,
        keepaliveCountMax: opts.keepaliveCountMax ?? KEEPALIVE_COUNT_MAX,
        ...(knownAlgos.length ? { algorithms: { serverHostKey: knownAlgos as never } } : {}),
        hostVerifier: (key: Buffer) => {
          verdict = checkHostKey(entries, key, name, label);
          return verdict.ok;
        },
      });
    } catch (err) {
      fail(new SshConnectError('OTHER', `Cannot connect to ${label}: ${(err as Error).message}`));
    }
  });
}

/** Appends a host's key line to the trust store (made 0600, as ssh keeps known_hosts private). */
function recordHostKey(file: string, line: string): void {
  fs.mkdirSync(localPath.dirname(file), { recursive: true, mode: 0o700 });
  fs.appendFileSync(file, `${line}\n`, { mode: 0o600 });
}

/** One round trip: the remote home, which tools the host has, and the work folder made. */
async function setUp(shell: SshShell, config: SshConfig): Promise<void> {
  const probe = `printf '%s\\n' "$HOME"; command -v setsid >/dev/null 2>&1 && echo setsid; command -v bash >/dev/null 2>&1 && echo bash; true`;
  const r = await shell.execPlain(probe);
  if (r.lost) throw new SshConnectError('OTHER', `Connected to ${shell.label}, then lost it: ${r.lost}`);
  const lines = r.stdout.split('\n');
  const home = lines[0]?.startsWith('/') ? path.normalize(lines[0]) : '/tmp';
  const tools = { setsid: lines.includes('setsid'), bash: lines.includes('bash') };
  const workDir = workDirFor(config, home);
  const mk = await shell.execPlain(`mkdir -p -- ${shq(workDir)} && test -w ${shq(workDir)}`);
  if (mk.lost) throw new SshConnectError('OTHER', `Connected to ${shell.label}, then lost it: ${mk.lost}`);
  if (mk.exitCode !== 0) {
    throw new SshConnectError('WORKDIR', `Cannot make the work folder ${workDir} on ${shell.label}: ${mk.stderr.trim() || `it is not writable (exit code ${mk.exitCode})`}`);
  }
  shell.init({ tools, home, workDir });
}

/** With `identity_credential_id`, only that credential of the keys the session may use for the host; none is an error, never a fallback. */
function namedVaultKey(config: SshConfig, host: string, keys: VaultSshKey[]): VaultSshKey[] {
  const id = config.identity_credential_id;
  if (!id) return keys;
  const named = keys.filter((k) => k.id === id);
  if (named.length === 0) {
    throw new SshConnectError('AUTH', `identity_credential_id ${id} is not an ssh_private_key this session may use for ${host} (it must be in one of the session's vaults with hosts covering ${host}, or in the default vault naming ${host})`);
  }
  return named;
}
