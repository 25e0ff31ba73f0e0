/**
 * The vault key: 256 bits that seal every value. Either a key file in the data folder
 * (`vault.key`, mode 0600, made at first start; in the desktop app its content is wrapped by
 * the OS keychain through Electron's safeStorage), or a passphrase (`CORRAL_VAULT_PASSPHRASE`)
 * stretched with scrypt and a salt kept in the database. A sealed check value in the database
 * tells a wrong key from a right one, so a wrong passphrase is an error, never garbage.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { DEFAULT_SCRYPT, deriveKey, KEY_BYTES, open, seal, SealError, type ScryptParams } from './crypto';
import type { VaultStore } from './store';

export type KeyMode = 'key_file' | 'passphrase';

/**
 * Wraps the key file's content with an OS facility (the desktop shell implements it with
 * Electron's async safeStorage API). Only offered where it is real protection: not on Linux's
 * `basic_text` backend.
 */
export interface VaultKeyWrapper {
  /** For messages, e.g. `Electron safeStorage (gnome_libsecret)`. */
  readonly name: string;
  available(): Promise<boolean>;
  wrap(text: string): Promise<Buffer>;
  unwrap(wrapped: Buffer): Promise<string>;
}

/** The vault cannot be opened: a wrong passphrase, a missing or foreign key file. */
export class VaultKeyError extends Error {
  override readonly name = 'VaultKeyError';
}

export interface KeyOptions {
  dataDir: string;
  /** Set: passphrase mode. */
  passphrase?: string;
  wrapper?: VaultKeyWrapper;
}

export interface UnlockedKey {
  key: Buffer;
  mode: KeyMode;
  /** Where the key came from, for the start-up message (never the key). */
  description: string;
}

const CHECK_TEXT = 'corral vault key check v1';
const CHECK_AAD = 'corral:vault-keyring';
const WRAPPED_PREFIX = 'safestorage:';
export const KEY_FILE = 'vault.key';

/** Opens (or, on first start, makes) the vault key and checks it against the database. */
export async function unlockKey(store: VaultStore, opts: KeyOptions): Promise<UnlockedKey> {
  const mode: KeyMode = opts.passphrase ? 'passphrase' : 'key_file';
  const file = path.join(opts.dataDir, KEY_FILE);
  let ring = store.keyring();
  const sealedCount = () => store.countCredentials();
  if (ring && ring.mode !== mode) {
    // Nothing sealed yet: the vault can start over with the new mode.
    if (sealedCount() > 0) {
      throw new VaultKeyError(
        ring.mode === 'passphrase'
          ? `the vault in ${opts.dataDir} is locked with a passphrase: set CORRAL_VAULT_PASSPHRASE to open it`
          : `the vault in ${opts.dataDir} is locked with the key file ${file}, not a passphrase: unset CORRAL_VAULT_PASSPHRASE to open it`,
      );
    }
    ring = undefined;
  }

  let key: Buffer;
  let description: string;
  let kdf: string | null = null;
  let salt: Buffer | null = null;
  if (mode === 'passphrase') {
    const params: ScryptParams = ring?.kdf ? (JSON.parse(ring.kdf) as ScryptParams) : DEFAULT_SCRYPT;
    salt = ring?.salt ?? crypto.randomBytes(16);
    kdf = JSON.stringify(params);
    key = await deriveKey(opts.passphrase!, salt, params);
    description = 'the passphrase in CORRAL_VAULT_PASSPHRASE (scrypt)';
  } else {
    const mayCreate = !ring || sealedCount() === 0;
    const got = await readOrCreateKeyFile(file, opts.wrapper, mayCreate, ring ? sealedCount() : 0);
    key = got.key;
    description = `the key file ${file}${got.wrappedBy ? ` (wrapped by ${got.wrappedBy})` : ''}`;
  }

  if (ring) {
    try {
      open(key, ring.check_value, CHECK_AAD);
    } catch (err) {
      if (!(err instanceof SealError)) throw err;
      if (sealedCount() > 0 || mode === 'passphrase') {
        throw new VaultKeyError(
          mode === 'passphrase'
            ? `CORRAL_VAULT_PASSPHRASE does not open the vault in ${opts.dataDir} (wrong passphrase)`
            : `the key file ${file} does not open the vault in ${opts.dataDir} (it was replaced, or belongs to another data folder); the sealed credentials cannot be read without the original`,
        );
      }
      ring = undefined; // an empty vault with a new key file: start over
    }
  }
  if (!ring) store.setKeyring({ mode, kdf, salt, check_value: seal(key, CHECK_TEXT, CHECK_AAD) });
  return { key, mode, description };
}

async function readOrCreateKeyFile(
  file: string,
  wrapper: VaultKeyWrapper | undefined,
  mayCreate: boolean,
  sealed: number,
): Promise<{ key: Buffer; wrappedBy?: string }> {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8').trim();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw new VaultKeyError(`cannot read the vault key file ${file}: ${(err as Error).message}`);
    if (!mayCreate) {
      throw new VaultKeyError(`the vault key file ${file} is missing: the ${sealed} credential(s) sealed with it cannot be opened. Restore the file from a backup.`);
    }
    return createKeyFile(file, wrapper);
  }
  checkMode(file);
  let encoded = text;
  let wrappedBy: string | undefined;
  if (text.startsWith(WRAPPED_PREFIX)) {
    if (!wrapper || !(await wrapper.available())) {
      throw new VaultKeyError(
        `the vault key file ${file} is wrapped by the desktop app's OS keychain (Electron safeStorage), which this process cannot use: open this data folder with the desktop app`,
      );
    }
    try {
      encoded = await wrapper.unwrap(Buffer.from(text.slice(WRAPPED_PREFIX.length), 'base64'));
    } catch (err) {
      throw new VaultKeyError(`the OS keychain (${wrapper.name}) could not unwrap ${file}: ${(err as Error).message}`);
    }
    wrappedBy = wrapper.name;
  }
  const key = Buffer.from(encoded, 'base64');
  if (key.length !== KEY_BYTES || key.toString('base64') !== encoded) throw new VaultKeyError(`${file} is not a Corral vault key`);
  return { key, wrappedBy };
}

async function createKeyFile(file: string, wrapper: VaultKeyWrapper | undefined): Promise<{ key: Buffer; wrappedBy?: string }> {
  const key = crypto.randomBytes(KEY_BYTES);
  const wrap = wrapper && (await wrapper.available()) ? wrapper : undefined;
  const content = wrap ? WRAPPED_PREFIX + (await wrap.wrap(key.toString('base64'))).toString('base64') : key.toString('base64');
  fs.mkdirSync(path.dirname(file), { recursive: true });
  try {
    fs.writeFileSync(file, `${content}\n`, { mode: 0o600, flag: 'wx' });
  } catch (err) {
    // Another process made it first: use theirs.
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return readOrCreateKeyFile(file, wrapper, false, 0);
    throw new VaultKeyError(`cannot write the vault key file ${file}: ${(err as Error).message}`);
  }
  return { key, wrappedBy: wrap?.name };
}

/** A key file others can read is made private again (and said so). */
function checkMode(file: string): void {
  if (process.platform === 'win32') return;
  const mode = fs.statSync(file).mode & 0o777;
  if (mode & 0o077) {
    fs.chmodSync(file, 0o600);
    console.warn(`corral: the vault key file ${file} was readable by others (mode ${mode.toString(8)}); it is 0600 now`);
  }
}
