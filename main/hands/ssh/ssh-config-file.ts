/**
 * Reading the user's ssh config: resolving one `Host` alias (through `ssh -G` when the ssh binary
 * exists, since it follows Include, Match and tokens exactly as ssh does; else the ssh-config
 * package over the file with its Includes inlined) and listing the aliases it defines.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import SSHConfig from 'ssh-config';
import { SshConnectError } from './errors';
import { DEFAULT_SSH_PORT, expandPath, localUserName } from './local-paths';
import { hostGitEnv } from '../../child-env';
import { HostRunFailed, runHere } from '../host-run';

/** What an alias resolves to (values still unexpanded: `~` and % tokens stay). */
export interface AliasValues {
  hostname: string;
  port?: number;
  user?: string;
  identityFiles: string[];
  knownHostsFiles?: string[];
  hostKeyAlias?: string;
  resolvedBy: 'ssh -G' | 'ssh-config';
}

/** A `Host` alias of an ssh config file, with what it resolves to. */
export interface SshConfigHost {
  alias: string;
  host: string;
  port: number;
  user: string;
  /** The first key file the alias names that exists on this machine, if any. */
  identityFile?: string;
}

const ALIAS = /^[A-Za-z0-9_.@:%+][A-Za-z0-9_.@:%+-]*$/;

export function defaultSshConfigFile(home = os.homedir()): string {
  return path.join(home, '.ssh', 'config');
}

let sshBinary: Promise<boolean> | undefined;
/** Is there an `ssh` binary to ask (`ssh -G`)? Checked once. */
export function hasSshBinary(): Promise<boolean> {
  sshBinary ??= runHere('ssh', ['-V'], { what: 'ssh -V', timeoutMs: 5000 }).then(
    () => true,
    (err: NodeJS.ErrnoException) => err.code !== 'ENOENT',
  );
  return sshBinary;
}

/**
 * `ssh -G`, started by the launcher (not on the host's loop) with the allowlisted environment
 * the host's git gets: HOME, USER and the agent socket, never the host's own secrets (a config's
 * `Match exec` runs a command with it).
 */
async function runSshG(alias: string, file: string | undefined): Promise<Map<string, string[]>> {
  const args = ['-G', ...(file ? ['-F', file] : []), '--', alias];
  let stdout: string;
  try {
    stdout = (await runHere('ssh', args, { what: 'ssh -G', timeoutMs: 10_000, maxBytes: 4 * 1024 * 1024, env: hostGitEnv() })).toString('utf8');
  } catch (err) {
    const why = (err instanceof HostRunFailed && err.stderr ? err.stderr : (err as Error).message).split('\n').slice(-3).join(' ');
    throw new SshConnectError('CONFIG', `Cannot resolve the ssh config alias '${alias}' (ssh -G): ${why}`);
  }
  const values = new Map<string, string[]>();
  for (const line of stdout.split('\n')) {
    const m = /^(\S+)\s+(.*)$/.exec(line.trim());
    if (!m) continue;
    const key = m[1]!.toLowerCase();
    values.set(key, [...(values.get(key) ?? []), m[2]!]);
  }
  return values;
}

/** Unsupported settings: connecting directly would silently go somewhere else. */
function refuseProxies(alias: string, proxyJump: string | undefined, proxyCommand: string | undefined): void {
  const jump = proxyJump && proxyJump !== 'none' ? `ProxyJump ${proxyJump}` : proxyCommand && proxyCommand !== 'none' ? `ProxyCommand ${proxyCommand}` : undefined;
  if (jump) throw new SshConnectError('CONFIG', `The ssh config alias '${alias}' uses ${jump}, which Corral does not support yet; connect to a host it can reach directly.`);
}

const splitList = (v: string | undefined) => (v ? v.split(/\s+/).filter(Boolean) : undefined);

/** Resolves one alias. `file` defaults to ~/.ssh/config (with `ssh -G`, /etc/ssh/ssh_config applies too). */
export async function resolveAlias(alias: string, opts: { file?: string; resolver?: 'ssh -G' | 'ssh-config'; homeDir?: string } = {}): Promise<AliasValues> {
  if (!ALIAS.test(alias)) throw new SshConnectError('CONFIG', `'${alias}' is not a valid ssh config host alias.`);
  const home = opts.homeDir ?? os.homedir();
  const resolver = opts.resolver ?? ((await hasSshBinary()) ? 'ssh -G' : 'ssh-config');
  if (resolver === 'ssh -G') {
    // Without -F, ssh reads ~/.ssh/config and /etc/ssh/ssh_config, as the user's own ssh would.
    const useF = opts.file !== undefined && path.resolve(opts.file) !== defaultSshConfigFile(home);
    const v = await runSshG(alias, useF ? opts.file : undefined);
    const one = (k: string) => v.get(k)?.[0];
    refuseProxies(alias, one('proxyjump'), one('proxycommand'));
    const port = Number(one('port'));
    return {
      hostname: one('hostname') ?? alias,
      port: Number.isInteger(port) && port > 0 ? port : undefined,
      user: one('user'),
      identityFiles: v.get('identityfile') ?? [],
      knownHostsFiles: [...(splitList(one('userknownhostsfile')) ?? []), ...(splitList(one('globalknownhostsfile')) ?? [])],
      hostKeyAlias: one('hostkeyalias') && one('hostkeyalias') !== 'none' ? one('hostkeyalias') : undefined,
      resolvedBy: 'ssh -G',
    };
  }
  const file = opts.file ?? defaultSshConfigFile(home);
  const text = loadConfigText(file, home);
  if (text === undefined) throw new SshConnectError('CONFIG', `Cannot resolve the ssh config alias '${alias}': ${file} does not exist.`);
  const c = SSHConfig.parse(text).compute(alias, { ignoreCase: true, matchExec: false });
  const str = (k: string) => {
    const x = c[k];
    return Array.isArray(x) ? x[0] : x;
  };
  refuseProxies(alias, str('proxyjump'), str('proxycommand'));
  const port = Number(str('port'));
  const ids = c.identityfile;
  return {
    hostname: str('hostname')?.replace(/%h/g, alias) ?? alias,
    port: Number.isInteger(port) && port > 0 ? port : undefined,
    user: str('user'),
    identityFiles: ids === undefined ? [] : Array.isArray(ids) ? ids : [ids],
    knownHostsFiles: splitList(str('userknownhostsfile')),
    hostKeyAlias: str('hostkeyalias'),
    resolvedBy: 'ssh-config',
  };
}

/**
 * The text of an ssh config file with its `Include` lines replaced by the files they name
 * (relative paths are relative to ~/.ssh, as ssh does; `*` and `?` in the last part of a path),
 * so the ssh-config package, which does not follow Include, sees everything. undefined when the
 * file does not exist.
 */
export function loadConfigText(file: string, home = os.homedir(), depth = 0): string | undefined {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
  if (depth >= 16) return text;
  return text
    .split('\n')
    .map((line) => {
      const m = /^\s*include(?:\s*=\s*|\s+)(.+)$/i.exec(line);
      if (!m) return line;
      const parts: string[] = [];
      for (const raw of m[1]!.trim().split(/\s+/)) {
        const p = raw.replace(/^"(.*)"$/, '$1');
        const abs = p.startsWith('~/') ? path.join(home, p.slice(2)) : path.isAbsolute(p) ? p : path.join(home, '.ssh', p);
        for (const f of expandGlob(abs)) parts.push(loadConfigText(f, home, depth + 1) ?? '');
      }
      return parts.join('\n');
    })
    .join('\n');
}

function expandGlob(p: string): string[] {
  const base = path.basename(p);
  if (!/[*?]/.test(base)) return [p];
  const re = new RegExp(`^${base.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.')}$`);
  try {
    return fs
      .readdirSync(path.dirname(p))
      .filter((n) => re.test(n))
      .sort()
      .map((n) => path.join(path.dirname(p), n));
  } catch {
    return [];
  }
}

/**
 * The `Host` aliases of an ssh config file (following Include), without wildcard or negated
 * patterns, each with the host, port, user and key file it resolves to — what the UI offers when
 * the user attaches an SSH host.
 */
export async function listSshConfigHosts(file: string = defaultSshConfigFile(), opts: { resolver?: 'ssh -G' | 'ssh-config'; homeDir?: string } = {}): Promise<SshConfigHost[]> {
  const home = opts.homeDir ?? os.homedir();
  const text = loadConfigText(file, home);
  if (text === undefined) return [];
  const aliases: string[] = [];
  for (const line of SSHConfig.parse(text)) {
    if (line.type !== SSHConfig.DIRECTIVE || line.param.toLowerCase() !== 'host') continue;
    const values = typeof line.value === 'string' ? line.value.split(/\s+/) : line.value.map((v) => v.val);
    for (const v of values) if (v && !/[*?!]/.test(v) && ALIAS.test(v) && !aliases.includes(v)) aliases.push(v);
  }
  const out: SshConfigHost[] = [];
  // ssh -G takes a few ms each; a handful at a time.
  for (let i = 0; i < aliases.length; i += 8) {
    const batch = await Promise.all(
      aliases.slice(i, i + 8).map(async (alias): Promise<SshConfigHost | undefined> => {
        let v: AliasValues;
        try {
          v = await resolveAlias(alias, { file, resolver: opts.resolver, homeDir: home });
        } catch {
          return undefined;
        }
        const user = v.user ?? localUserName();
        const port = v.port ?? DEFAULT_SSH_PORT;
        const ctx = { home, host: v.hostname, port, user };
        const identityFile = v.identityFiles.map((f) => expandPath(f, ctx)).find((f) => fs.existsSync(f));
        return { alias, host: v.hostname, port, user, ...(identityFile ? { identityFile } : {}) };
      }),
    );
    for (const h of batch) if (h) out.push(h);
  }
  return out;
}
