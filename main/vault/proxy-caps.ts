/**
 * Capabilities and ports for the proxies hands reach (git, egress) that survive a restart of the
 * host. A hand keeps what it was given — a clone's `origin` URL on its disk, a proxy URL in a
 * running shell — while the host may be killed and started again; random tokens held in memory
 * and ports picked by the kernel would then leave the session's remotes dead.
 *
 * - A capability is `<prefix><session id>.<HMAC-SHA256(key, kind:session id)>`: checked by
 *   recomputing it, so nothing per session is stored, and it is as unguessable as the key
 *   (32 random bytes in `DATA/proxy-caps.key`, 0600, never leaves the host).
 * - Each proxy listens on the port it had last time (`DATA/<name>.port`) when that is free.
 * - Revocation survives a restart too: a session that has ended (deleted or archived, as the
 *   session log says, read at each check) has no capability, and one revoked explicitly is
 *   written to `DATA/proxy-caps.revoked` (one session id a line, appended before `revoke`
 *   resolves) and read back with the key. A host killed at any moment after either still
 *   refuses the capability when it starts again.
 */
import crypto from 'node:crypto';
import fsp from 'node:fs/promises';
import type http from 'node:http';
import path from 'node:path';

/** Whether a session may still use its capabilities (it exists and has not ended). */
export type SessionAlive = (sessionId: string) => boolean;

const REVOKED_FILE = 'proxy-caps.revoked';

export class ProxyCapabilities {
  private key?: Promise<Buffer>;
  private revokedRead?: Promise<Set<string>>;

  /** Without a data folder the key is made in memory and lasts one process, and so do revocations. */
  constructor(
    private readonly dataDir: string | undefined,
    private readonly alive: SessionAlive = () => true,
  ) {}

  /** The capability for one session and one proxy (`git`, `egress`). */
  async mint(kind: string, sessionId: string): Promise<string> {
    return `corral-${kind}-${sessionId}.${await this.mac(kind, sessionId)}`;
  }

  /** The session a capability was minted for, or undefined (forged, other kind, revoked). */
  async check(kind: string, cap: string): Promise<string | undefined> {
    const m = new RegExp(`^corral-${kind}-([A-Za-z0-9_]{1,64})\\.([A-Za-z0-9_-]{43})$`).exec(cap);
    if (!m || (await this.isRevoked(m[1]!))) return undefined;
    const want = Buffer.from(await this.mac(kind, m[1]!));
    const got = Buffer.from(m[2]!);
    return want.length === got.length && crypto.timingSafeEqual(want, got) ? m[1] : undefined;
  }

  /** Whether a session's capabilities are void: revoked, or the session ended (or is gone). */
  async isRevoked(sessionId: string): Promise<boolean> {
    return !this.alive(sessionId) || (await this.revoked()).has(sessionId);
  }

  /** Stops honouring a session's capabilities, for good: on record in the data folder once this resolves. */
  async revoke(sessionId: string): Promise<void> {
    const set = await this.revoked();
    if (set.has(sessionId)) return;
    set.add(sessionId);
    if (this.dataDir) await fsp.appendFile(path.join(this.dataDir, REVOKED_FILE), `${sessionId}\n`, { mode: 0o600 });
  }

  private revoked(): Promise<Set<string>> {
    this.revokedRead ??= (async () => {
      if (!this.dataDir) return new Set<string>();
      const text = await fsp.readFile(path.join(this.dataDir, REVOKED_FILE), 'utf8').catch((err: NodeJS.ErrnoException) => (err.code === 'ENOENT' ? '' : Promise.reject(err)));
      return new Set(text.split('\n').filter((l) => /^[A-Za-z0-9_]{1,64}$/.test(l)));
    })();
    this.revokedRead.catch(() => (this.revokedRead = undefined));
    return this.revokedRead;
  }

  private async mac(kind: string, sessionId: string): Promise<string> {
    return crypto.createHmac('sha256', await this.load()).update(`${kind}:${sessionId}`).digest('base64url');
  }

  private load(): Promise<Buffer> {
    this.key ??= (async () => {
      if (!this.dataDir) return crypto.randomBytes(32);
      const file = path.join(this.dataDir, 'proxy-caps.key');
      const have = await fsp.readFile(file).catch((err: NodeJS.ErrnoException) => (err.code === 'ENOENT' ? undefined : Promise.reject(err)));
      if (have?.length === 32) return have;
      const made = crypto.randomBytes(32);
      await fsp.mkdir(this.dataDir, { recursive: true, mode: 0o700 });
      await fsp.writeFile(file, made, { mode: 0o600 });
      return made;
    })();
    this.key.catch(() => (this.key = undefined));
    return this.key;
  }
}

/**
 * Listens on loopback at the port remembered under `name`, else any free port, and remembers
 * the one it got. Resolves with the server listening.
 */
export async function listenRemembered(server: http.Server, dataDir: string | undefined, name: string): Promise<void> {
  const file = dataDir ? path.join(dataDir, `${name}.port`) : undefined;
  const before = file ? Number(await fsp.readFile(file, 'utf8').catch(() => '')) : NaN;
  const listen = (port: number) =>
    new Promise<void>((resolve, reject) => {
      const onError = (err: Error) => reject(err);
      server.once('error', onError);
      server.listen(port, '127.0.0.1', () => {
        server.off('error', onError);
        resolve();
      });
    });
  if (Number.isInteger(before) && before > 0 && before < 65536) {
    try {
      return await listen(before);
    } catch {
      // Taken by something else now: any port will do (remotes pointing at the old one break).
    }
  }
  await listen(0);
  const port = (server.address() as { port: number }).port;
  if (file) await fsp.writeFile(file, String(port)).catch(() => {});
}
