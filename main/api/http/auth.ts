import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

/** Where the generated key lives in the data folder. */
export const API_KEY_FILE = 'api-key';

/**
 * The server's API key: `CORRAL_API_KEY` when set, else the one kept in the data folder
 * (mode 0600), made at first start.
 */
export function loadOrCreateApiKey(dataDir: string, env: NodeJS.ProcessEnv = process.env): { key: string; source: 'env' | 'file' | 'new' } {
  if (env.CORRAL_API_KEY) return { key: env.CORRAL_API_KEY, source: 'env' };
  const file = path.join(dataDir, API_KEY_FILE);
  try {
    const key = fs.readFileSync(file, 'utf8').trim();
    if (key) {
      fs.chmodSync(file, 0o600);
      return { key, source: 'file' };
    }
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  fs.mkdirSync(dataDir, { recursive: true });
  const key = newApiKey();
  // wx: never overwrite a key another process just wrote.
  try {
    fs.writeFileSync(file, `${key}\n`, { mode: 0o600, flag: 'wx' });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return loadOrCreateApiKey(dataDir, env);
    throw err;
  }
  return { key, source: 'new' };
}

/** Constant-time comparison of a presented key with the real one. */
export function keyMatches(presented: string | undefined | null, key: string): boolean {
  if (!presented) return false;
  const a = crypto.createHash('sha256').update(presented).digest();
  const b = crypto.createHash('sha256').update(key).digest();
  return crypto.timingSafeEqual(a, b);
}

/** The key sent as `x-api-key` or `Authorization: Bearer …`. */
export function presentedKey(headers: { get(name: string): string | null | undefined }): string | undefined {
  const x = headers.get('x-api-key');
  if (x) return x;
  const auth = headers.get('authorization');
  const m = auth ? /^Bearer\s+(.+)$/i.exec(auth) : null;
  return m?.[1]?.trim();
}


/** A fresh random API key (`corral-` and 43 random characters). */
export function newApiKey(): string {
  return `corral-${crypto.randomBytes(32).toString('base64url')}`;
}

/** The shortest API key accepted: a guessable key is no key. */
export const MIN_API_KEY_LENGTH = 32;

/** Why a key is refused (too short), or undefined. */
export function apiKeyProblem(key: string): string | undefined {
  return key.length < MIN_API_KEY_LENGTH ? `is too short (${key.length} characters; at least ${MIN_API_KEY_LENGTH}, e.g. from: openssl rand -base64 32)` : undefined;
}
