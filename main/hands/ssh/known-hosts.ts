/**
 * Host key checking against OpenSSH known_hosts files: plain and hashed (`|1|salt|hash`) host
 * entries, `[host]:port` for ports other than 22, patterns with `*`, `?` and `!`, `@revoked`.
 * (`@cert-authority` lines are ignored: ssh2 does not check host certificates.)
 */
import { createHash, createHmac } from 'node:crypto';
import fs from 'node:fs';

export interface KnownHostKey {
  /** Key type as written in the file, e.g. `ssh-ed25519`. */
  type: string;
  /** The public key blob (the base64 field, decoded). */
  blob: Buffer;
  revoked: boolean;
  file: string;
  line: number;
}

/** What the host offered, and what we know about it; on the connected shell as `hostKey`. */
export interface HostKeyInfo {
  /** Key type, e.g. `ssh-ed25519`. */
  type: string;
  /** `SHA256:…`, as `ssh-keygen -l` prints it. */
  fingerprint: string;
  /** True when a known_hosts file has this key for this host; false when the host was not there at all. */
  known: boolean;
  /** Where the matching entry is, when known. */
  knownFrom?: string;
  /** The name it is (or would be) recorded under: `host`, or `[host]:port`. */
  knownHostsName: string;
  /** A known_hosts line for this key, for a later "trust this host" step. */
  knownHostsLine: string;
  /** Set when this connection was the first: the key was added to this trust store file. */
  recordedIn?: string;
}

/** `host` for port 22, else `[host]:port` — how OpenSSH names a host in known_hosts. */
export function knownHostsName(host: string, port: number): string {
  return port === 22 ? host : `[${host}]:${port}`;
}

export function fingerprintOf(blob: Buffer): string {
  return `SHA256:${createHash('sha256').update(blob).digest('base64').replace(/=+$/, '')}`;
}

/** The key type written inside a public key blob (its first SSH string). */
export function keyTypeOf(blob: Buffer): string {
  if (blob.length < 4) return 'unknown';
  const len = blob.readUInt32BE(0);
  return blob.subarray(4, 4 + len).toString('latin1');
}

function patternMatches(pattern: string, name: string): boolean {
  const re = new RegExp(`^${pattern.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.')}$`, 'i');
  return re.test(name);
}

/** Does the hosts field of a known_hosts line name `name`? */
export function hostFieldMatches(field: string, name: string): boolean {
  if (field.startsWith('|1|')) {
    const [, , salt, hash] = field.split('|');
    if (!salt || !hash) return false;
    return createHmac('sha1', Buffer.from(salt, 'base64')).update(name).digest('base64') === hash;
  }
  let matched = false;
  for (const pat of field.split(',')) {
    if (pat.startsWith('!')) {
      if (patternMatches(pat.slice(1), name)) return false;
    } else if (patternMatches(pat, name)) matched = true;
  }
  return matched;
}

/** Every key the files record for `name` (missing files are skipped). */
export function lookupKnownHosts(files: readonly string[], name: string): KnownHostKey[] {
  const out: KnownHostKey[] = [];
  for (const file of files) {
    let text: string;
    try {
      text = fs.readFileSync(file, 'utf8');
    } catch {
      continue;
    }
    text.split('\n').forEach((raw, i) => {
      const line = raw.trim();
      if (!line || line.startsWith('#')) return;
      const fields = line.split(/\s+/);
      let revoked = false;
      if (fields[0]!.startsWith('@')) {
        const marker = fields.shift()!;
        if (marker === '@cert-authority') return;
        if (marker === '@revoked') revoked = true;
        else return;
      }
      const [hosts, type, b64] = fields;
      if (!hosts || !type || !b64 || !hostFieldMatches(hosts, name)) return;
      const blob = Buffer.from(b64, 'base64');
      if (blob.length === 0) return;
      out.push({ type, blob, revoked, file, line: i + 1 });
    });
  }
  return out;
}

/** ssh2's host key algorithm names for a key type found in known_hosts. */
export function hostKeyAlgorithmsFor(type: string): string[] {
  if (type === 'ssh-rsa') return ['rsa-sha2-512', 'rsa-sha2-256', 'ssh-rsa'];
  if (type === 'ssh-ed25519' || type.startsWith('ecdsa-sha2-') || type === 'ssh-dss') return [type];
  return [];
}

export type HostKeyVerdict = { ok: true; info: HostKeyInfo } | { ok: false; info: HostKeyInfo; reason: string };

/**
 * Checks an offered key: accepted when a known_hosts entry for the host has it; refused when the
 * host has entries but none with this key, or the key is revoked; accepted as unknown (`known:
 * false`) when the host is not in any file.
 */
export function checkHostKey(entries: readonly KnownHostKey[], blob: Buffer, name: string, label: string): HostKeyVerdict {
  const type = keyTypeOf(blob);
  const fingerprint = fingerprintOf(blob);
  const info: HostKeyInfo = { type, fingerprint, known: false, knownHostsName: name, knownHostsLine: `${name} ${type} ${blob.toString('base64')}` };
  const revoked = entries.find((e) => e.revoked && e.blob.equals(blob));
  if (revoked) return { ok: false, info, reason: `The host key of ${label} (${type} ${fingerprint}) is marked @revoked in ${revoked.file}:${revoked.line}; refusing to connect.` };
  const trusted = entries.filter((e) => !e.revoked);
  const match = trusted.find((e) => e.blob.equals(blob));
  if (match) return { ok: true, info: { ...info, known: true, knownFrom: `${match.file}:${match.line}` } };
  if (trusted.length === 0) return { ok: true, info };
  const where = trusted.map((e) => `${e.file}:${e.line}`).join(', ');
  return {
    ok: false,
    info,
    reason:
      `HOST KEY MISMATCH for ${label}: it offered ${type} ${fingerprint}, which is not the key recorded for ${name} in ${where}. ` +
      `Someone may be intercepting the connection, or the host was reinstalled. Refusing to connect; if the new key is right, remove the old entry (ssh-keygen -R '${name}') and connect again.`,
  };
}
