/**
 * Testing an SSH host before it is attached: which host key it offers (and whether it is the one
 * on record, a new one, or a changed one), and whether it accepts the key. A changed key is
 * refused before any authentication; a new one is shown to the user, who accepts it
 * (`acceptHostKey`) before the host can be attached.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import * as ssh2 from 'ssh2';
import type { AnyAuthMethod } from 'ssh2';
import { connectErrorFrom } from '../ssh/errors';
import { loadCredentials, type VaultSshKey } from '../ssh/keys';
import { checkHostKey, fingerprintOf, knownHostsName, lookupKnownHosts, type HostKeyVerdict } from '../ssh/known-hosts';
import { DropError } from './dropped-config';

const Client: typeof ssh2.Client = ssh2.Client ?? (ssh2 as unknown as { default: typeof ssh2 }).default.Client;

/** Where to connect and which known_hosts files speak for the host. */
export interface ProbeTarget {
  host: string;
  port: number;
  user: string;
  /** The user's files and Corral's trust store (written only by acceptHostKey). */
  knownHostsFiles: string[];
  timeoutMs?: number;
}

/** A key recorded for the host: what the user sees next to the new one when it changed. */
export interface RecordedKey {
  type: string;
  fingerprint: string;
  /** `file:line`. */
  where: string;
}

/** What a test connection found. */
export interface ProbeResult {
  host_key: {
    type: string;
    fingerprint: string;
    /** `known`: on record; `new`: the host is in no file (accept it to attach); `changed`: other keys are on record (refused). */
    status: 'known' | 'new' | 'changed' | 'revoked';
    /** The keys on record for the host (for `changed`: the old ones). */
    recorded: RecordedKey[];
  };
  /** Did the host accept the key? Not tried when the host key changed. */
  auth: { ok: boolean; message: string };
}

const statusOf = (v: HostKeyVerdict): ProbeResult['host_key']['status'] => (v.ok ? (v.info.known ? 'known' : 'new') : /revoked/i.test(v.reason) ? 'revoked' : 'changed');

/** Connects once to see the host key and try the keys; throws DropError when nothing answers as SSH. */
export async function probeSshHost(target: ProbeTarget, keys: readonly VaultSshKey[]): Promise<ProbeResult> {
  const name = knownHostsName(target.host, target.port);
  const entries = lookupKnownHosts(target.knownHostsFiles, name);
  const recorded = entries.filter((e) => !e.revoked).map((e) => ({ type: e.type, fingerprint: fingerprintOf(e.blob), where: `${e.file}:${e.line}` }));
  const label = `${target.user}@${target.host}:${target.port}`;
  let methods: AnyAuthMethod[] = [];
  let offered: string[] = [];
  if (keys.length) ({ methods, offered } = loadCredentials([], target.user, { agent: false, vaultKeys: keys }));
  const timeout = target.timeoutMs ?? 10_000;

  return new Promise((resolve, reject) => {
    const client = new Client();
    let verdict: HostKeyVerdict | undefined;
    let settled = false;
    const finish = (auth: ProbeResult['auth']) => {
      if (settled) return;
      settled = true;
      client.on('error', () => {});
      client.end();
      if (!verdict) return reject(new DropError(`Cannot test ${label}: the connection ended before the host showed its key`));
      resolve({ host_key: { type: verdict.info.type, fingerprint: verdict.info.fingerprint, status: statusOf(verdict), recorded }, auth });
    };
    client.once('ready', () => finish({ ok: true, message: `${label} accepted ${offered.join(', ')}` }));
    client.on('error', (err: Error & { level?: string; code?: unknown }) => {
      if (verdict && !verdict.ok) return finish({ ok: false, message: 'not tried: the host key is not the one on record' });
      if (verdict && err.level === 'client-authentication') {
        return finish({ ok: false, message: methods.length ? `${label} accepted none of ${offered.join(', ')}` : 'no key was given to try' });
      }
      if (settled) return;
      settled = true;
      reject(new DropError(connectErrorFrom(err, label, timeout).message));
    });
    client.connect({
      host: target.host,
      port: target.port,
      username: target.user,
      authHandler: methods.length ? methods : [{ type: 'none', username: target.user } as AnyAuthMethod],
      readyTimeout: timeout,
      hostVerifier: (key: Buffer) => {
        verdict = checkHostKey(entries, key, name, label);
        return verdict.ok;
      },
    });
  });
}

/**
 * Records the host key the user accepted in Corral's trust store, after checking that the host
 * still offers exactly that key and that no other key is on record for it (a changed key is
 * never overwritten here: the old entry has to be removed by hand, as with ssh).
 */
export async function acceptHostKey(target: ProbeTarget, fingerprint: string, trustStore: string): Promise<{ recorded_in: string | null; status: 'recorded' | 'already_known' }> {
  const probe = await probeSshHost(target, []);
  const k = probe.host_key;
  if (k.status === 'changed' || k.status === 'revoked') {
    throw new DropError(`The host key of ${target.host}:${target.port} changed: on record ${k.recorded.map((r) => `${r.type} ${r.fingerprint} (${r.where})`).join(', ')}; offered now ${k.type} ${k.fingerprint}. Refusing to trust it.`);
  }
  if (k.fingerprint !== fingerprint) throw new DropError(`${target.host}:${target.port} now offers ${k.type} ${k.fingerprint}, not the ${fingerprint} that was accepted; test the connection again`);
  if (k.status === 'known') return { recorded_in: null, status: 'already_known' };
  const line = await hostKeyLine(target);
  // The same key the test saw, not one swapped in between the two connections.
  const blob = Buffer.from(line.split(' ')[2] ?? '', 'base64');
  if (fingerprintOf(blob) !== fingerprint) throw new DropError(`${target.host}:${target.port} offered a different host key on the second look; refusing to trust it`);
  await fs.mkdir(path.dirname(trustStore), { recursive: true, mode: 0o700 });
  await fs.appendFile(trustStore, `${line}\n`, { mode: 0o600 });
  return { recorded_in: trustStore, status: 'recorded' };
}

/** The known_hosts line of the key the host offers now (a handshake cut short after the key). */
function hostKeyLine(target: ProbeTarget): Promise<string> {
  const name = knownHostsName(target.host, target.port);
  return new Promise((resolve, reject) => {
    const client = new Client();
    let line: string | undefined;
    client.on('error', () => (line ? resolve(line) : reject(new DropError(`Cannot read the host key of ${target.host}:${target.port}`))));
    client.on('close', () => (line ? resolve(line) : undefined));
    client.connect({
      host: target.host,
      port: target.port,
      username: target.user,
      readyTimeout: target.timeoutMs ?? 10_000,
      hostVerifier: (key: Buffer) => {
        line = checkHostKey([], key, name, name).info.knownHostsLine;
        return false;
      },
    });
  });
}
