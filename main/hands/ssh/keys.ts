/**
 * The client's credentials: private key files read on this machine (they never leave this
 * process and are never logged), and the ssh-agent when one runs. Encrypted keys need a
 * passphrase; without one they are skipped, and when nothing else is left that is the error.
 */
import fs from 'node:fs';
import * as ssh2 from 'ssh2';
import type { AnyAuthMethod, ParsedKey } from 'ssh2';
import { SshConnectError } from './errors';
import { fingerprintOf } from './known-hosts';
import type { VaultSshKey } from '../hand-env';

export type { VaultSshKey };

// ssh2 is CommonJS; Node's ESM loader exposes only some of its names (not `utils`).
const utils: typeof ssh2.utils = ssh2.utils ?? (ssh2 as unknown as { default: typeof ssh2 }).default.utils;

export interface Credentials {
  /** For ssh2's `authHandler`: each key in order, then the agent. */
  methods: AnyAuthMethod[];
  /** The vault key behind a method, by position in `methods`. */
  vaultKeys?: Map<AnyAuthMethod, VaultSshKey>;
  /** What is offered, for error messages: path and fingerprint, never the key. */
  offered: string[];
  /** Keys that could not be used, and why. */
  skipped: string[];
}

export function loadCredentials(
  identityFiles: readonly { path: string; explicit: boolean }[],
  username: string,
  opts: { passphrase?: string; agent?: string | false; vaultKeys?: readonly VaultSshKey[] } = {},
): Credentials {
  const methods: AnyAuthMethod[] = [];
  const offered: string[] = [];
  const skipped: string[] = [];
  const vaultKeys = new Map<AnyAuthMethod, VaultSshKey>();
  for (const v of opts.vaultKeys ?? []) {
    const parsed = utils.parseKey(v.privateKey, v.passphrase);
    const key = parsed instanceof Error ? undefined : Array.isArray(parsed) ? (parsed[0] as ParsedKey) : parsed;
    // The vault checked the key when it was stored; one it cannot use now is skipped, never shown.
    if (!key?.isPrivateKey()) {
      skipped.push(`the vault's key ${v.name} (${parsed instanceof Error ? parsed.message : 'not a private key'})`);
      continue;
    }
    const method: AnyAuthMethod = { type: 'publickey', username, key };
    methods.push(method);
    vaultKeys.set(method, v);
    offered.push(`the vault's key ${v.name} (${key.type} ${fingerprintOf(key.getPublicSSH())})`);
  }
  const agent = opts.agent === false ? undefined : (opts.agent ?? process.env.SSH_AUTH_SOCK);
  const agentUsable = Boolean(agent && (agent === 'pageant' || fs.existsSync(agent)));
  let encryptedExplicit: string | undefined;

  for (const { path: file, explicit } of identityFiles) {
    let data: Buffer;
    try {
      data = fs.readFileSync(file);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (!explicit) continue;
      if (code === 'ENOENT') throw new SshConnectError('KEY', `The identity file ${file} does not exist on this machine.`);
      if (code === 'EACCES') throw new SshConnectError('KEY', `The identity file ${file} cannot be read (permission denied).`);
      throw new SshConnectError('KEY', `The identity file ${file} cannot be read (${code ?? String(err)}).`);
    }
    const parsed = utils.parseKey(data, opts.passphrase);
    if (parsed instanceof Error) {
      if (/passphrase/i.test(parsed.message)) {
        skipped.push(`${file} (protected by a passphrase)`);
        if (explicit) encryptedExplicit = file;
      } else {
        skipped.push(`${file} (not a private key ssh2 can read: ${parsed.message})`);
        if (explicit) throw new SshConnectError('KEY', `The identity file ${file} is not a usable private key: ${parsed.message}.`);
      }
      continue;
    }
    const key: ParsedKey = Array.isArray(parsed) ? (parsed[0] as ParsedKey) : parsed;
    if (!key.isPrivateKey()) {
      skipped.push(`${file} (a public key, not a private one)`);
      if (explicit) throw new SshConnectError('KEY', `The identity file ${file} holds a public key; name the private key file.`);
      continue;
    }
    methods.push({ type: 'publickey', username, key });
    offered.push(`${file} (${key.type} ${fingerprintOf(key.getPublicSSH())})`);
  }

  if (agentUsable) {
    methods.push({ type: 'agent', username, agent: agent! });
    offered.push('the keys in ssh-agent');
  }
  if (encryptedExplicit && !agentUsable && methods.length === 0) {
    throw new SshConnectError(
      'KEY',
      `The key ${encryptedExplicit} is protected by a passphrase, and Corral has none for it. Load it into ssh-agent (ssh-add ${encryptedExplicit}), or use a key without a passphrase.`,
    );
  }
  if (methods.length === 0) {
    const why = skipped.length ? `; skipped: ${skipped.join(', ')}` : '';
    throw new SshConnectError(
      'KEY',
      `No usable private key for ${username}: none of ${identityFiles.map((f) => f.path).join(', ') || '(no key files)'} could be used and no ssh-agent runs${why}. Name a key with identity_file.`,
    );
  }
  return { methods, offered, skipped, vaultKeys };
}
