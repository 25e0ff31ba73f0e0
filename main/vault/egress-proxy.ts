/**
 * The egress proxy: the HTTP proxy a hand's `HTTP_PROXY`/`HTTPS_PROXY` point at when its session
 * has `environment_variable` credentials. The hand's variables hold placeholders; in a request to
 * one of a credential's allowed hosts the proxy replaces the credential's placeholder with its
 * value, in header values and/or the body as the credential's `injection_location` says
 * (egress-forward.ts). A request to any other host goes out as the hand sent it, placeholder and all.
 *
 * HTTPS: a CONNECT to a host some credential in scope allows is terminated here with a
 * certificate minted by the host's own CA (egress-ca.ts; the hand is given the CA to trust), so
 * the same substitution applies inside; a CONNECT to any other host is an opaque tunnel. The
 * guard (egress-guard.ts) keeps the proxy from being a way into the host. The session is told
 * apart by a capability in the proxy URL's password (Proxy-Authorization), so one listener
 * serves every session.
 */
import http from 'node:http';
import net from 'node:net';
import tls from 'node:tls';
import type { AddressInfo } from 'node:net';
import type { ResolvedCredential } from './vault';
import type { CredentialPurpose } from './scope';
import { EgressCa, type CaSealer } from './egress-ca';
import { forward, namesHost, refuse } from './egress-forward';
import { checkTarget, type Verdict } from './egress-guard';
import { listenRemembered, ProxyCapabilities } from './proxy-caps';
import { onAllowList } from './allow-list';

/** What the proxy needs from the vault. */
export interface EgressSource {
  resolveAll(sessionId: string, purpose: CredentialPurpose): Promise<ResolvedCredential[]>;
}

/** How the proxy is set up. */
export interface EgressOptions {
  /** The data folder holding the CA (`egress-ca.key`, `egress-ca.pem`); without it HTTPS is only tunnelled. */
  dataDir?: string;
  /** A CA certificate (PEM) trusted for upstream HTTPS besides the system's roots: tests' self-signed servers. */
  upstreamCa?: string;
  /** `host:port` on this machine reachable without a credential naming the host: tests' loopback servers. */
  allowLocal?: string[];
  /** Ports of this machine's servers the proxy must never forward to besides its own and the other proxies': the API server's (serve gives it). */
  ownPorts?: number[];
  /** The host's capabilities, shared with the git proxy (one key, one revocation list); default: its own. */
  caps?: ProxyCapabilities;
  /** Seals the CA's private key with the vault's key (the host gives the vault); without it the key file is plain PEM. */
  sealer?: CaSealer;
}

const USER = 'corral';

/** Who is asking: the session, and for a sandboxed hand the allow list it must stay within. */
interface Asker {
  sessionId: string;
  allowed?: readonly string[];
}

/** What a terminated tunnel is for. */
interface Tunnel {
  sessionId: string;
  host: string;
  port: number;
  address: string;
}

export class EgressProxy {
  readonly listening: Promise<void>;
  /** The CA hands must trust for HTTPS to allowed hosts; undefined when the proxy only tunnels. */
  readonly ca?: EgressCa;
  private readonly server: http.Server;
  /** Serves the requests inside terminated tunnels (never listens itself). */
  private readonly inner: http.Server;
  private readonly tunnels = new WeakMap<object, Tunnel>();
  private readonly caps: ProxyCapabilities;
  private address?: AddressInfo;
  /** Ports of the host's own servers: never a destination on this machine. */
  private readonly ownPorts = new Set<number>();
  private readonly allowLocal: Set<string>;
  /** Connections from the sandbox gateway, bound to a session and its hand's allow list. */
  private readonly bound = new WeakMap<object, Asker>();

  constructor(
    private readonly source: EgressSource,
    private readonly opts: EgressOptions = {},
  ) {
    if (opts.dataDir) this.ca = new EgressCa(opts.dataDir, opts.sealer);
    this.caps = opts.caps ?? new ProxyCapabilities(opts.dataDir);
    this.allowLocal = new Set((opts.allowLocal ?? []).map((h) => h.toLowerCase()));
    for (const p of opts.ownPorts ?? []) this.protect(p);
    const failed = (res: http.ServerResponse) => (err: unknown) => {
      console.error('corral: egress proxy:', err instanceof Error ? err.message : err);
      if (!res.headersSent) refuse(res, 502, 'the egress proxy failed (see the host log)');
      else res.destroy();
    };
    this.server = http.createServer((req, res) => void this.handle(req, res).catch(failed(res)));
    this.server.on('connect', (req, socket: net.Socket, head) => void this.connect(req, socket, head).catch(() => socket.destroy()));
    this.server.on('clientError', (_err, socket) => socket.destroy());
    // busybox wget half-closes its side after an https:// request to a proxy; without this Node
    // drops the request (and the answer) at that end of input.
    (this.server as http.Server & { httpAllowHalfOpen: boolean }).httpAllowHalfOpen = true;
    this.inner = http.createServer((req, res) => void this.handleInner(req, res).catch(failed(res)));
    this.inner.on('clientError', (_err, socket) => socket.destroy());
    this.listening = listenRemembered(this.server, opts.dataDir, 'egress-proxy').then(() => {
      this.address = this.server.address() as AddressInfo;
      this.ownPorts.add(this.address.port);
    });
    this.listening.catch(() => {});
  }

  get port(): number | undefined {
    return this.address?.port;
  }

  /** Ports of the host's other servers (model proxy, git proxy, API) the proxy must never forward to. */
  protect(port: number | undefined): void {
    if (port) this.ownPorts.add(port);
  }

  /** The proxy URL for a session's hand, given the address the hand reaches the proxy at (the same after a restart). */
  async proxyUrl(sessionId: string, reach: { host: string; port: number }): Promise<string> {
    return `http://${USER}:${await this.caps.mint('egress', sessionId)}@${reach.host}:${reach.port}`;
  }

  /**
   * Serves a connection bound to a session (from the sandbox gateway): no proxy credentials
   * needed, and only hosts on `allowed` (the sandbox's own allow list) or that a credential in
   * scope is for are reached, so the proxy is no way around the sandbox's network policy.
   */
  attach(socket: net.Socket, sessionId: string, allowed: readonly string[]): void {
    this.bound.set(socket, { sessionId, allowed });
    this.server.emit('connection', socket);
  }

  /** Voids a session's capability for good (also after a restart). */
  revoke(sessionId: string): Promise<void> {
    return this.caps.revoke(sessionId);
  }

  close(): Promise<void> {
    return new Promise((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
      this.inner.closeAllConnections();
    });
  }

  private async sessionOf(req: http.IncomingMessage): Promise<Asker | undefined> {
    const bound = this.bound.get(req.socket);
    if (bound) return (await this.caps.isRevoked(bound.sessionId)) ? undefined : bound;
    const m = /^Basic\s+(\S+)$/i.exec(req.headers['proxy-authorization'] ?? '');
    if (!m) return undefined;
    const [user, cap] = Buffer.from(m[1]!, 'base64').toString('utf8').split(':');
    const sessionId = user === USER && cap ? await this.caps.check('egress', cap) : undefined;
    return sessionId ? { sessionId } : undefined;
  }

  /** The credentials for a host and whether the guard (and a sandboxed hand's allow list) lets the proxy connect there. */
  private async route(asker: Asker, host: string, port: number): Promise<{ creds: ResolvedCredential[]; verdict: Verdict }> {
    const bare = host.replace(/^\[|\]$/g, '').toLowerCase();
    const creds = await this.source.resolveAll(asker.sessionId, { use: 'egress', host: bare });
    if (asker.allowed && creds.length === 0 && !onAllowList(asker.allowed, bare, port)) {
      return { creds, verdict: { ok: false, why: `${bare}:${port} is not on this hand's network allow list` } };
    }
    const verdict = await checkTarget({ host: bare, port, named: creds.some((c) => namesHost(c, bare)), ownPorts: this.ownPorts, allowLocal: this.allowLocal });
    return { creds, verdict };
  }

  /** A plain-HTTP proxy request (absolute URL). */
  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const asker = await this.sessionOf(req);
    if (!asker) return refuse(res, 407, 'this proxy needs the session\'s proxy credentials', { 'proxy-authenticate': 'Basic realm="corral"' });
    let url: URL;
    try {
      url = new URL(req.url ?? '');
    } catch {
      return refuse(res, 400, 'a proxy request needs an absolute http:// URL');
    }
    // An absolute https:// URL (busybox wget asks this way): the proxy makes the TLS connection.
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return refuse(res, 400, 'only http:// and https:// URLs are proxied');
    const { creds, verdict } = await this.route(asker, url.hostname, Number(url.port || (url.protocol === 'https:' ? 443 : 80)));
    if (!verdict.ok) return refuse(res, 403, verdict.why);
    await forward(req, res, { url, address: verdict.address, upstreamCa: this.opts.upstreamCa }, creds);
  }

  /** A request inside a terminated tunnel: an origin-form path on the tunnel's host. */
  private async handleInner(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const t = this.tunnels.get(req.socket);
    if (!t) return refuse(res, 500, 'a request on an unknown tunnel');
    const host = net.isIPv6(t.host) ? `[${t.host}]` : t.host;
    const url = new URL(`https://${host}:${t.port}${(req.url ?? '/').startsWith('/') ? req.url : '/'}`);
    // Looked up again per request: a credential removed mid-tunnel stops being added at once.
    const creds = await this.source.resolveAll(t.sessionId, { use: 'egress', host: t.host });
    await forward(req, res, { url, address: t.address, upstreamCa: this.opts.upstreamCa }, creds);
  }

  /** CONNECT: terminated for hosts with a credential in scope, an opaque tunnel for the rest. */
  private async connect(req: http.IncomingMessage, socket: net.Socket, head: Buffer): Promise<void> {
    socket.on('error', () => socket.destroy());
    const end = (status: string, why = ''): void =>
      void socket.end(`HTTP/1.1 ${status}\r\n${why ? `Content-Type: text/plain; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(why)}\r\n` : ''}\r\n${why}`);
    const asker = await this.sessionOf(req);
    if (!asker) return end('407 Proxy Authentication Required\r\nProxy-Authenticate: Basic realm="corral"');
    const m = /^(\[[^\]]+\]|[^:[\]]+):(\d+)$/.exec(req.url ?? '');
    if (!m) return end('400 Bad Request');
    const host = m[1]!.replace(/^\[|\]$/g, '').toLowerCase();
    const port = Number(m[2]);
    const { creds, verdict } = await this.route(asker, host, port);
    const sessionId = asker.sessionId;
    if (!verdict.ok) return end('403 Forbidden', `corral egress proxy: ${verdict.why}\n`);
    const terminate = creds.length > 0 && this.ca !== undefined && (net.isIP(host) !== 0 || /^[a-z0-9.-]+$/.test(host));
    const context = terminate ? await this.ca!.contextFor(host).catch(() => undefined) : undefined;
    if (terminate && !context) return end('502 Bad Gateway');
    socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
    if (head.length) socket.unshift(head);
    // Only a TLS handshake is terminated; anything else in the tunnel passes untouched (and unsubstituted).
    const first = context ? await firstByte(socket) : undefined;
    if (context && first === 0x16) {
      const secure = new tls.TLSSocket(socket, { isServer: true, secureContext: context, ALPNProtocols: ['http/1.1'] });
      secure.on('error', () => secure.destroy());
      this.tunnels.set(secure, { sessionId, host, port, address: verdict.address });
      this.inner.emit('connection', secure);
      return;
    }
    const up = net.connect(port, verdict.address, () => up.pipe(socket).pipe(up));
    up.on('error', () => socket.destroy());
    socket.on('close', () => up.destroy());
  }
}

/** Waits for the tunnel's first byte without consuming it (undefined: the client left). */
function firstByte(socket: net.Socket): Promise<number | undefined> {
  return new Promise((resolve) => {
    const onData = (chunk: Buffer) => {
      cleanup();
      socket.pause();
      socket.unshift(chunk);
      resolve(chunk[0]);
    };
    const onEnd = () => (cleanup(), resolve(undefined));
    const cleanup = () => {
      socket.off('data', onData);
      socket.off('end', onEnd);
      socket.off('close', onEnd);
    };
    socket.on('data', onData);
    socket.on('end', onEnd);
    socket.on('close', onEnd);
  });
}
