import crypto from 'node:crypto';

/** Bytes of a vault key (AES-256). */
export const KEY_BYTES = 32;
const VERSION = 1;
const NONCE_BYTES = 12;
const TAG_BYTES = 16;

/** A sealed value could not be opened: wrong key, wrong associated data, or damaged bytes. */
export class SealError extends Error {
  override readonly name = 'SealError';
}

/**
 * Encrypts one value with AES-256-GCM: a fresh random 96-bit nonce per value, and `aad` (what
 * the value belongs to, e.g. its credential id) authenticated with it, so a sealed value moved
 * to another row does not open. Layout: version (1) | nonce (12) | ciphertext | tag (16).
 */
export function seal(key: Buffer, plaintext: Buffer | string, aad: string): Buffer {
  if (key.length !== KEY_BYTES) throw new Error(`a vault key has ${KEY_BYTES} bytes, got ${key.length}`);
  const nonce = crypto.randomBytes(NONCE_BYTES);
  const cipher = crypto.createCipheriv('aes-256-gcm', key, nonce, { authTagLength: TAG_BYTES });
  cipher.setAAD(Buffer.from(aad, 'utf8'));
  const body = Buffer.concat([cipher.update(typeof plaintext === 'string' ? Buffer.from(plaintext, 'utf8') : plaintext), cipher.final()]);
  return Buffer.concat([Buffer.from([VERSION]), nonce, body, cipher.getAuthTag()]);
}

/** Opens what `seal` made with the same key and associated data; anything else is a SealError. */
export function open(key: Buffer, sealed: Buffer, aad: string): Buffer {
  if (sealed.length < 1 + NONCE_BYTES + TAG_BYTES || sealed[0] !== VERSION) throw new SealError('not a sealed vault value');
  const nonce = sealed.subarray(1, 1 + NONCE_BYTES);
  const tag = sealed.subarray(sealed.length - TAG_BYTES);
  const body = sealed.subarray(1 + NONCE_BYTES, sealed.length - TAG_BYTES);
  const decipher = crypto.createDecipheriv('aes-256-gcm', key, nonce, { authTagLength: TAG_BYTES });
  decipher.setAAD(Buffer.from(aad, 'utf8'));
  decipher.setAuthTag(tag);
  try {
    return Buffer.concat([decipher.update(body), decipher.final()]);
  } catch {
    throw new SealError('the value does not open with this key');
  }
}

/** scrypt parameters of a passphrase-derived key (stored with the salt, so they can change later). */
export interface ScryptParams {
  N: number;
  r: number;
  p: number;
}
export const DEFAULT_SCRYPT: ScryptParams = { N: 2 ** 15, r: 8, p: 1 };

/** A 256-bit key from a passphrase (scrypt; about 32 MiB and a tenth of a second). */
export function deriveKey(passphrase: string, salt: Buffer, params: ScryptParams = DEFAULT_SCRYPT): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    crypto.scrypt(passphrase.normalize('NFC'), salt, KEY_BYTES, { ...params, maxmem: 256 * params.N * params.r + 1024 * 1024 }, (err, key) =>
      err ? reject(err) : resolve(key),
    );
  });
}
