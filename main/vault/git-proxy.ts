/**
 * The git proxy: a loopback HTTP server in the host that a hand's `git` talks to instead of the
 * real repository. Each session gets an unguessable path prefix (a capability); under it the
 * rest of the path names the real repository (`/<cap>/<scheme>/<host[:port]>/<path>`), and the
 * proxy forwards git's smart-HTTP requests (`info/refs`, `git-upload-pack`, `git-receive-pack`)
 * to it with the session's `git_token` for that repository added as HTTP Basic. A repository no
 * `git_token` in the session's vaults covers, an unknown capability or any other path is refused
 * with 403 and nothing is forwarded: the token goes to its own repositories only.
 *
 * Capabilities and the port survive a restart of the host (proxy-caps.ts), so a clone's remote
 * keeps working for a session resumed after one.
 *
 * The hand's `.git/config` holds only the proxy's URL (capability included): it lets the hand do
 * git over HTTP to the session's own repositories while the hand can reach the proxy, which is
 * what the hand may do anyway; it never holds the token.
 */
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { listenRemembered, ProxyCapabilities } from './proxy-caps';
import type { ResolvedCredential } from './vault';
import type { CredentialPurpose } from './scope';

/** What the proxy needs from the vault. */
export interface GitTokenSource {
  resolve(sessionId: string, purpose: CredentialPurpose): Promise<ResolvedCredential | undefined>;
}

/** git's smart-HTTP endpoints: nothing else (no dumb-HTTP file reads, no web UI) is forwarded. */
const SMART_HTTP = /^(.*?)\/(info\/refs|git-upload-pack|git-receive-pack)$/;
const SERVICES = new Set(['git-upload-pack', 'git-receive-pack']);
const FORWARDED_REQUEST_HEADERS = ['content-type', 'content-encoding', 'content-length', 'accept', 'accept-encoding', 'git-protocol', 'user-agent', 'pragma'];
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-authenticate', 'proxy-authorization', 'proxy-connection', 'te', 'trailer', 'transfer-encoding', 'upgrade', 'www-authenticate', 'set-cookie']);

/** Where a session's repository is reached through the proxy. */
export interface GitRoute {
  /** The proxy's port on the host's loopback. */
  port: number;
  /** The path (capability and repository) the hand's remote URL ends with. */
  path: string;
  /** The full URL on this machine (clone at provisioning uses it). */
  url: string;
  /** The path without the capability, for a connection bound to the session (a sandboxed hand's, through the sandbox gateway). */
  boundPath: string;
}

export class GitProxy {
  readonly listening: Promise<void>;
  private readonly server: http.Server;
  private readonly caps: ProxyCapabilities;
  private address?: AddressInfo;
  /** Connections from the sandbox gateway, already bound to their session (no capability in the path). */
  private readonly bound = new WeakMap<object, string>();

  constructor(
    private readonly tokens: GitTokenSource,
    /** Where the capability key and the remembered port live; without it both last one process. */
    dataDir?: string,
    /** The host's capabilities, shared with the egress proxy (one key, one revocation list). */
    caps?: ProxyCapabilities,
  ) {
    this.caps = caps ?? new ProxyCapabilities(dataDir);
    this.server = http.createServer((req, res) => {
      this.handle(req, res).catch((err: unknown) => {
        console.error('corral: git proxy:', err instanceof Error ? err.message : err);
        if (!res.headersSent) refuse(res, 502, 'the git proxy failed (see the host log)');
        else res.destroy();
      });
    });
    this.server.on('clientError', (_err, socket) => socket.destroy());
    this.listening = listenRemembered(this.server, dataDir, 'git-proxy').then(() => {
      this.address = this.server.address() as AddressInfo;
    });
    this.listening.catch(() => {});
  }

  get port(): number | undefined {
    return this.address?.port;
  }

  /**
   * The proxy's route to a repository for a session, when one of the session's vaults holds a
   * `git_token` for it (undefined otherwise: the repository is cloned as it is, without a token).
   */
  async route(sessionId: string, repoUrl: string): Promise<GitRoute | undefined> {
    await this.listening;
    let u: URL;
    try {
      u = new URL(repoUrl);
    } catch {
      return undefined;
    }
    if ((u.protocol !== 'http:' && u.protocol !== 'https:') || u.username || u.password || u.search || u.hash) return undefined;
    if (!(await this.tokens.resolve(sessionId, { use: 'git', url: repoUrl }))) return undefined;
    const boundPath = `/${u.protocol.slice(0, -1)}/${u.host}${u.pathname.replace(/\/+$/, '')}`;
    const route = `/${await this.caps.mint('git', sessionId)}${boundPath}`;
    return { port: this.address!.port, path: route, url: `http://127.0.0.1:${this.address!.port}${route}`, boundPath };
  }

  /** Serves a connection bound to a session (from the sandbox gateway): its paths carry no capability. */
  attach(socket: import('node:net').Socket, sessionId: string): void {
    this.bound.set(socket, sessionId);
    this.server.emit('connection', socket);
  }

  /** Voids a session's capability for good (its hands' remotes stop working, also after a restart). */
  revoke(sessionId: string): Promise<void> {
    return this.caps.revoke(sessionId);
  }

  close(): Promise<void> {
    return new Promise((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://proxy');
    const bound = this.bound.get(req.socket);
    const parts = url.pathname.split('/');
    // A bound connection's path has no capability segment; its session is the binding's, unless revoked since.
    const [cap, scheme, host, ...rest] = bound ? ['', ...parts.slice(1)] : parts.slice(1);
    const sessionId = bound ? ((await this.caps.isRevoked(bound)) ? undefined : bound) : cap ? await this.caps.check('git', cap) : undefined;
    if (!sessionId || (scheme !== 'http' && scheme !== 'https') || !host) return refuse(res, 403, 'not a repository this proxy serves');
    const m = SMART_HTTP.exec(`/${rest.join('/')}`);
    if (!m || rest.some((s) => s === '..' || s === '.' || s === '')) return refuse(res, 403, 'only git smart-HTTP requests are forwarded');
    const [, repoPath, endpoint] = m;
    const service = endpoint === 'info/refs' ? url.searchParams.get('service') : endpoint;
    if (!service || !SERVICES.has(service) || (endpoint === 'info/refs' ? req.method !== 'GET' : req.method !== 'POST')) return refuse(res, 403, 'only git smart-HTTP requests are forwarded');
    const repoUrl = `${scheme}://${host}${repoPath}`;
    const cred = (await this.tokens.resolve(sessionId, { use: 'git', url: repoUrl })) as ResolvedCredential<'git_token'> | undefined;
    if (!cred) return refuse(res, 403, `no git_token in this session's vaults covers ${repoUrl}`);
    // One ledger event per git command: each starts with exactly one info/refs request.
    if (endpoint === 'info/refs') cred.recordUse(repoUrl);
    const target = new URL(`${repoUrl}/${endpoint}${url.search}`);
    const headers: http.OutgoingHttpHeaders = {};
    for (const h of FORWARDED_REQUEST_HEADERS) if (req.headers[h] !== undefined) headers[h] = req.headers[h];
    const username = String(cred.credential.auth.username ?? 'x-access-token');
    headers.authorization = `Basic ${Buffer.from(`${username}:${cred.secret.token}`).toString('base64')}`;
    const lib = target.protocol === 'https:' ? https : http;
    await new Promise<void>((resolve) => {
      const up = lib.request(target, { method: req.method, headers }, (upRes) => {
        const out: http.OutgoingHttpHeaders = {};
        for (const [k, v] of Object.entries(upRes.headers)) if (!HOP_BY_HOP.has(k) && v !== undefined) out[k] = v;
        // A redirect is not followed, and its Location (upstream, maybe with the credential echoed) is not passed on.
        if (upRes.statusCode && upRes.statusCode >= 300 && upRes.statusCode < 400) {
          upRes.resume();
          refuse(res, 502, `the repository answered with a redirect (${upRes.statusCode}); the git proxy does not follow redirects`);
          return resolve();
        }
        res.writeHead(upRes.statusCode ?? 502, out);
        upRes.pipe(res);
        upRes.on('end', resolve);
        upRes.on('error', () => (res.destroy(), resolve()));
      });
      up.on('error', (err) => {
        if (!res.headersSent) refuse(res, 502, `the repository could not be reached: ${err.message}`);
        else res.destroy();
        resolve();
      });
      req.pipe(up);
      req.on('aborted', () => up.destroy());
    });
  }
}

function refuse(res: http.ServerResponse, status: number, message: string): void {
  res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8' });
  res.end(`corral git proxy: ${message}\n`);
}
