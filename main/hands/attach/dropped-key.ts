/**
 * A private key dropped on the window: checked in the host (a file that is not a key is refused;
 * one protected by a passphrase asks for it) and described by its public half only.
 */
import * as ssh2 from 'ssh2';
import type { ParsedKey } from 'ssh2';
import { fingerprintOf } from '../ssh/known-hosts';
import { DropError } from './dropped-config';

// ssh2 is CommonJS; Node's ESM loader exposes only some of its names (not `utils`).
const utils: typeof ssh2.utils = ssh2.utils ?? (ssh2 as unknown as { default: typeof ssh2 }).default.utils;

/** A readable private key's public facts; never the key. */
export interface DroppedKeyInfo {
  key_type: string;
  fingerprint: string;
}

/** The key is fine but locked: the form asks for the passphrase. */
export class PassphraseNeeded extends Error {
  override readonly name = 'PassphraseNeeded';
}

/** Private keys are a few KiB (RSA 16384 is under 13 KiB). */
export const MAX_KEY_BYTES = 64 * 1024;

/** Checks a dropped key; throws DropError (not a key) or PassphraseNeeded. */
export function inspectDroppedKey(text: string, passphrase: string | undefined, fileName = 'the file'): DroppedKeyInfo {
  if (text.length > MAX_KEY_BYTES) throw new DropError(`${fileName} is too large to be a private key`);
  if (!/-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----/.test(text)) {
    if (/^(ssh-(rsa|ed25519|dss)|ecdsa-sha2-\S+|sk-\S+) AAAA/m.test(text)) throw new DropError(`${fileName} is a public key; drop the private key (the file without .pub)`);
    if (/^\s*Host\s/im.test(text)) throw new DropError(`${fileName} looks like an ssh config, not a key`);
    throw new DropError(`${fileName} is not a private key`);
  }
  const parsed = utils.parseKey(text, passphrase);
  if (parsed instanceof Error) {
    if (/passphrase|decrypt|encrypted/i.test(parsed.message)) {
      if (passphrase) throw new PassphraseNeeded(`that passphrase does not open ${fileName}`);
      throw new PassphraseNeeded(`${fileName} is protected by a passphrase`);
    }
    throw new DropError(`${fileName} is not a private key Corral can read (${parsed.message})`);
  }
  const key: ParsedKey = Array.isArray(parsed) ? (parsed[0] as ParsedKey) : parsed;
  if (!key.isPrivateKey()) throw new DropError(`${fileName} is a public key; drop the private key`);
  return { key_type: key.type, fingerprint: fingerprintOf(key.getPublicSSH()) };
}
