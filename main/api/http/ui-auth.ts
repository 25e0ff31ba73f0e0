import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { keyMatches, newApiKey } from './auth';

/** How long a link's code may wait before it is used (it is used once). */
export const CODE_TTL_MS = 5 * 60_000;
/** How long a window's session lasts; a new link makes a new one. */
export const SESSION_TTL_MS = 7 * 24 * 60 * 60_000;
/** Outstanding codes and sessions kept at most; the oldest go first (bounded memory). */
const MAX_CODES = 64;
const MAX_SESSIONS = 256;

/** Options of {@link ServerAuth}. */
export interface ServerAuthOptions {
  /** The API key in force. */
  key: string;
  /** Where a rotated key is written (DATA/api-key); absent: rotation keeps the new key in memory only. */
  keyFile?: string;
  codeTtlMs?: number;
  sessionTtlMs?: number;
  /** The clock (tests). */
  now?: () => number;
}

/**
 * The server's credentials in one place: the API key (rotatable), the one-time codes that
 * links carry, and the window sessions those codes are traded for. Codes and sessions are
 * random, kept only as hashes in memory, expire, and all die when the key rotates — so a
 * leaked link, browser history entry or cookie stops working with the next rotation (or
 * restart) at the latest.
 */
export class ServerAuth {
  private currentKey: string;
  /** sha256(code) → expiry. */
  private readonly codes = new Map<string, number>();
  /** sha256(session token) → expiry. */
  private readonly sessions = new Map<string, number>();
  private readonly listeners = new Set<() => void>();
  private readonly now: () => number;

  constructor(private readonly opts: ServerAuthOptions) {
    this.currentKey = opts.key;
    this.now = opts.now ?? Date.now;
  }

  /** Whether a presented key is the one in force (constant time). */
  keyMatches(presented: string | null | undefined): boolean {
    return keyMatches(presented, this.currentKey);
  }

  /** A new one-time code for a link, valid for a few minutes. */
  mintCode(): { code: string; expiresAt: Date } {
    this.prune(this.codes, MAX_CODES - 1);
    const code = crypto.randomBytes(24).toString('base64url');
    const expires = this.now() + (this.opts.codeTtlMs ?? CODE_TTL_MS);
    this.codes.set(hash(code), expires);
    return { code, expiresAt: new Date(expires) };
  }

  /** Trades a code for a new session token; undefined when the code is wrong, used or expired. */
  redeem(code: string): { token: string; maxAgeSeconds: number } | undefined {
    const h = hash(code);
    const expires = this.codes.get(h);
    // Used once, whatever happens next.
    this.codes.delete(h);
    if (expires === undefined || expires <= this.now()) return undefined;
    this.prune(this.sessions, MAX_SESSIONS - 1);
    const token = crypto.randomBytes(32).toString('base64url');
    const ttl = this.opts.sessionTtlMs ?? SESSION_TTL_MS;
    this.sessions.set(hash(token), this.now() + ttl);
    return { token, maxAgeSeconds: Math.floor(ttl / 1000) };
  }

  /** Whether a window's session token is live. */
  sessionValid(token: string | undefined): boolean {
    if (!token) return false;
    const h = hash(token);
    const expires = this.sessions.get(h);
    if (expires === undefined) return false;
    if (expires <= this.now()) {
      this.sessions.delete(h);
      return false;
    }
    return true;
  }

  /** Ends one window session (log out). */
  revoke(token: string): void {
    this.sessions.delete(hash(token));
    this.emit();
  }

  /** Ends every window session and link. */
  revokeAll(): void {
    this.codes.clear();
    this.sessions.clear();
    this.emit();
  }

  /**
   * A new random key: written to the key file (0600, replaced atomically) when there is one,
   * in force at once; every code and session dies with the old key.
   */
  rotate(): string {
    const key = newApiKey();
    if (this.opts.keyFile) writeKeyFile(this.opts.keyFile, key);
    this.currentKey = key;
    this.revokeAll();
    return key;
  }

  /** Called when sessions are revoked (open sockets re-check theirs). */
  onRevoke(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private emit(): void {
    for (const l of this.listeners) l();
  }

  /** Drops expired entries, then the oldest until at most `keep` remain (Maps keep insertion order). */
  private prune(map: Map<string, number>, keep: number): void {
    const now = this.now();
    for (const [k, exp] of map) if (exp <= now) map.delete(k);
    for (const k of map.keys()) {
      if (map.size <= keep) break;
      map.delete(k);
    }
  }
}

/** Writes a key file atomically with mode 0600 (a reader never sees half a key). */
export function writeKeyFile(file: string, key: string): void {
  const tmp = path.join(path.dirname(file), `.${path.basename(file)}.${process.pid}.tmp`);
  fs.writeFileSync(tmp, `${key}\n`, { mode: 0o600 });
  fs.renameSync(tmp, file);
}

function hash(s: string): string {
  return crypto.createHash('sha256').update(s).digest('base64url');
}
