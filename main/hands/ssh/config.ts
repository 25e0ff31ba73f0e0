/**
 * The `ssh` environment config, and turning it into a concrete target (host, port, user, key
 * files, known_hosts files), resolving a `Host` alias of ~/.ssh/config when one is named.
 *
 * Precedence, as with the ssh command line: `port`, `user` and `identity_file` given in the config
 * win over the alias; with `ssh_config_host` the host name is the alias's HostName and `host` is
 * not used (the schema requires it; the UI fills it with the alias).
 */
import os from 'node:os';
import path from 'node:path';
import { DEFAULT_SSH_PORT, expandPath, localUserName } from './local-paths';
import { resolveAlias, type AliasValues } from './ssh-config-file';

export { DEFAULT_SSH_PORT, expandPath, localUserName };

/** The `ssh` environment config (structurally the API's `{type: 'ssh', …}` config). */
export interface SshConfig {
  type?: 'ssh';
  host: string;
  port?: number;
  user?: string;
  /** A `Host` alias from ~/.ssh/config to resolve host, port, user and key from. */
  ssh_config_host?: string;
  /** Path of a private key file on this machine. */
  identity_file?: string;
  /**
   * An `ssh_private_key` credential (`vcrd_…`) to log in with: the only vault key offered, and
   * only if the session may use it for this host (its vaults, or the default vault's keys that
   * name the host); otherwise the connection fails saying so.
   */
  identity_credential_id?: string;
  /** Work folder on the host: absolute, or relative to the remote home (default `corral-work`). */
  working_dir?: string;
}

/** Where and how to connect, after the alias (if any) is resolved. */
export interface SshTarget {
  host: string;
  port: number;
  user: string;
  /** Key files to try, in order; `explicit` ones must exist, the others are skipped when missing. */
  identityFiles: { path: string; explicit: boolean }[];
  /** known_hosts files to check the host key against. */
  knownHostsFiles: string[];
  /** The name the host is recorded under in known_hosts (HostKeyAlias, else the host name). */
  hostKeyName: string;
  /** How the alias was resolved, when there was one. */
  resolvedBy?: 'ssh -G' | 'ssh-config';
}

/** Overridable for tests and for callers that keep things elsewhere. */
export interface ResolveOptions {
  /** The ssh config file an alias is looked up in (default ~/.ssh/config, plus /etc/ssh/ssh_config via `ssh -G`). */
  sshConfigFile?: string;
  /** Which resolver to use for an alias (default: `ssh -G` when the ssh binary exists). */
  resolver?: 'ssh -G' | 'ssh-config';
  /** known_hosts files (default: what the alias says, else ~/.ssh/known_hosts{,2} and /etc/ssh/ssh_known_hosts{,2}). */
  knownHostsFiles?: string[];
  /** Home folder on this machine (default os.homedir()). */
  homeDir?: string;
}

const DEFAULT_KEY_NAMES = ['id_rsa', 'id_ecdsa', 'id_ecdsa_sk', 'id_ed25519', 'id_ed25519_sk', 'id_xmss', 'id_dsa'];

/**
 * `user@host:port` as far as the config says it without resolving anything (describe() is
 * synchronous and must not change once connected: it goes into tool descriptions). With an
 * alias, the alias stands for what it resolves to: `alias`, plus any user or port given here.
 */
export function targetLabel(config: SshConfig): string {
  if (config.ssh_config_host) return `${config.user ? `${config.user}@` : ''}${config.ssh_config_host}${config.port ? `:${config.port}` : ''}`;
  return `${config.user ?? localUserName()}@${config.host}:${config.port ?? DEFAULT_SSH_PORT}`;
}

export function defaultKnownHostsFiles(home: string): string[] {
  return [path.join(home, '.ssh', 'known_hosts'), path.join(home, '.ssh', 'known_hosts2'), '/etc/ssh/ssh_known_hosts', '/etc/ssh/ssh_known_hosts2'];
}

/** Resolves the config into a target. Throws SshConnectError (CONFIG) when the alias cannot be resolved. */
export async function resolveTarget(config: SshConfig, opts: ResolveOptions = {}): Promise<SshTarget> {
  const home = opts.homeDir ?? os.homedir();
  let alias: AliasValues | undefined;
  if (config.ssh_config_host) alias = await resolveAlias(config.ssh_config_host, { file: opts.sshConfigFile, resolver: opts.resolver, homeDir: home });

  const host = alias?.hostname ?? config.host;
  const port = config.port ?? alias?.port ?? DEFAULT_SSH_PORT;
  const user = config.user ?? alias?.user ?? localUserName();
  const ctx = { home, host, port, user };

  const identityFiles: SshTarget['identityFiles'] = [];
  if (config.identity_file) identityFiles.push({ path: expandPath(config.identity_file, ctx), explicit: true });
  else if (alias?.identityFiles.length) {
    // `ssh -G` lists the defaults too, indistinguishably: a missing file is skipped, not an error.
    for (const f of alias.identityFiles) identityFiles.push({ path: expandPath(f, ctx), explicit: false });
  } else {
    for (const name of DEFAULT_KEY_NAMES) identityFiles.push({ path: path.join(home, '.ssh', name), explicit: false });
  }

  const knownHostsFiles = opts.knownHostsFiles ?? (alias?.knownHostsFiles?.length ? alias.knownHostsFiles.map((f) => expandPath(f, ctx)) : defaultKnownHostsFiles(home));
  return {
    host,
    port,
    user,
    identityFiles: dedupe(identityFiles),
    knownHostsFiles,
    hostKeyName: alias?.hostKeyAlias ?? host,
    resolvedBy: alias?.resolvedBy,
  };
}

function dedupe(files: SshTarget['identityFiles']): SshTarget['identityFiles'] {
  const seen = new Set<string>();
  return files.filter((f) => (seen.has(f.path) ? false : (seen.add(f.path), true)));
}
