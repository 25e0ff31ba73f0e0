/**
 * An ssh config file dropped on the window: its text (a browser gives no path) read for the
 * hosts it names. Only what a direct connection needs is taken (HostName, User, Port, and the
 * names of IdentityFiles, which the form asks for when they are not in the vault); a host that
 * needs ProxyJump/ProxyCommand is listed with why it cannot be attached.
 */
import path from 'node:path';
import SSHConfig from 'ssh-config';

/** One `Host` of a dropped config. */
export interface DroppedSshHost {
  /** The `Host` alias. */
  alias: string;
  /** HostName, else the alias. */
  host: string;
  user?: string;
  port?: number;
  /** File names of its IdentityFile lines (the file itself is on the user's machine, or nowhere). */
  identity_files: string[];
  /** Set when Corral cannot connect to it directly (ProxyJump, ProxyCommand). */
  unsupported?: string;
}

/** A dropped file refused, saying why; nothing was stored. */
export class DropError extends Error {
  override readonly name = 'DropError';
}

/** The largest config accepted: ssh configs are a few KiB; anything near this is not one. */
export const MAX_CONFIG_BYTES = 256 * 1024;
const ALIAS = /^[A-Za-z0-9_.@:%+][A-Za-z0-9_.@:%+-]*$/;
const KNOWN = new Set(['host', 'match', 'hostname', 'user', 'port', 'identityfile', 'include', 'proxyjump', 'proxycommand']);

/** Reads a dropped ssh config; throws DropError for text that is not one or names no host. */
export function parseDroppedSshConfig(text: string, fileName = 'the file'): DroppedSshHost[] {
  if (text.length > MAX_CONFIG_BYTES) throw new DropError(`${fileName} is ${text.length} bytes; an ssh config is far smaller, so it was not read`);
  if (text.includes('\u0000')) throw new DropError(`${fileName} is a binary file, not an ssh config`);
  if (/-----BEGIN [A-Z ]*PRIVATE KEY-----/.test(text)) throw new DropError(`${fileName} is a private key, not an ssh config`);
  let parsed: ReturnType<typeof SSHConfig.parse>;
  try {
    parsed = SSHConfig.parse(text);
  } catch (err) {
    throw new DropError(`${fileName} is not an ssh config: ${(err as Error).message}`);
  }
  const directives = [...parsed].filter((l) => l.type === SSHConfig.DIRECTIVE);
  // Text with no `Host` line is not a config worth attaching from, whatever else it holds.
  const hostLines = directives.filter((l) => (l as { param: string }).param.toLowerCase() === 'host');
  if (hostLines.length === 0) {
    const known = directives.some((l) => KNOWN.has((l as { param: string }).param.toLowerCase()));
    throw new DropError(known ? `${fileName} names no Host: there is nothing to attach` : `${fileName} is not an ssh config (no Host lines)`);
  }
  const aliases: string[] = [];
  for (const line of hostLines) {
    const value = (line as { value: string | { val: string }[] }).value;
    const values = typeof value === 'string' ? value.split(/\s+/) : value.map((v) => v.val);
    for (const v of values) if (v && !/[*?!]/.test(v) && ALIAS.test(v) && !aliases.includes(v)) aliases.push(v);
  }
  if (aliases.length === 0) throw new DropError(`${fileName} has only wildcard Host patterns: no host to attach`);
  return aliases.map((alias) => {
    const c = parsed.compute(alias, { ignoreCase: true, matchExec: false } as never) as Record<string, string | string[] | undefined>;
    const one = (k: string) => {
      const x = c[k] ?? c[k.toLowerCase()] ?? findCase(c, k);
      return Array.isArray(x) ? x[0] : x;
    };
    const all = (k: string) => {
      const x = c[k] ?? findCase(c, k);
      return x === undefined ? [] : Array.isArray(x) ? x : [x];
    };
    const port = Number(one('Port'));
    const jump = one('ProxyJump');
    const command = one('ProxyCommand');
    const unsupported = jump && jump !== 'none' ? `it uses ProxyJump ${jump}` : command && command !== 'none' ? 'it uses a ProxyCommand' : undefined;
    return {
      alias,
      host: (one('HostName') ?? alias).replace(/%h/g, alias),
      ...(one('User') ? { user: one('User')! } : {}),
      ...(Number.isInteger(port) && port > 0 && port < 65536 ? { port } : {}),
      identity_files: all('IdentityFile').map((f) => path.basename(f.replace(/^"(.*)"$/, '$1'))),
      ...(unsupported ? { unsupported } : {}),
    };
  });
}

function findCase(c: Record<string, unknown>, key: string): string | string[] | undefined {
  const k = Object.keys(c).find((n) => n.toLowerCase() === key.toLowerCase());
  return k === undefined ? undefined : (c[k] as string | string[]);
}
