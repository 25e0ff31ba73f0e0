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
 */
import crypto from 'node:crypto';
import fsp from 'node:fs/promises';
import type http from 'node:http';
import path from 'node:path';

export class ProxyCapabilities {
  private key?: Promise<Buffer>;
  private readonly revoked = new Set<string>();

  /** Without a data folder the key is made in memory and lasts one process. */
  constructor(private readonly dataDir: string | undefined) {}

  /** The capability for one session and one proxy (`git`, `egress`). */
  async mint(kind: string, sessionId: string): Promise<string> {
    return `corral-${kind}-${sessionId}.${await this.mac(kind, sessionId)}`;
  }

  /** The session a capability was minted for, or undefined (forged, other kind, revoked). */
  async check(kind: string, cap: string): Promise<string | undefined> {
    const m = new RegExp(`^corral-${kind}-([A-Za-z0-9_]{1,64})\\.([A-Za-z0-9_-]{43})$`).exec(cap);
    if (!m || this.revoked.has(m[1]!)) return undefined;
    const want = Buffer.from(await this.mac(kind, m[1]!));
    const got = Buffer.from(m[2]!);
    return want.length === got.length && crypto.timingSafeEqual(want, got) ? m[1] : undefined;
  }

  /** Whether a session's capabilities were revoked. */
  async isRevoked(sessionId: string): Promise<boolean> {
    return this.revoked.has(sessionId);
  }

  /** Stops honouring a session's capabilities for the life of this process. */
  revoke(sessionId: string): void {
    this.revoked.add(sessionId);
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
