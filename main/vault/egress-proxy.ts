/**
 * The egress proxy: the HTTP proxy a hand's `HTTP_PROXY`/`HTTPS_PROXY` point at when its session
 * has `environment_variable` credentials. The hand's variables hold placeholders; in a plain-HTTP
 * request to one of a credential's allowed hosts the proxy replaces the credential's placeholder
 * with its value, in header values and/or the body as the credential's `injection_location`
 * says. A request to any other host goes out as the hand sent it, placeholder and all.
 *
 * HTTPS goes through CONNECT as an opaque tunnel: the proxy cannot see inside it without
 * terminating TLS (a CA of its own the hand would have to trust), which is not built, so HTTPS
 * requests carry the placeholder. The session is told apart by a capability in the proxy URL's
 * password (Proxy-Authorization), so one listener serves every session.
 */
import crypto from 'node:crypto';
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import type { ResolvedCredential } from './vault';
import type { CredentialPurpose } from './scope';
import { placeholderOf } from './vault-types';

/** What the proxy needs from the vault. */
export interface EgressSource {
  resolveAll(sessionId: string, purpose: CredentialPurpose): Promise<ResolvedCredential[]>;
}

/** Bodies are read whole to substitute in them; larger ones are refused (413). */
const MAX_BODY_BYTES = 16 * 1024 * 1024;
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-authenticate', 'proxy-authorization', 'proxy-connection', 'te', 'trailer', 'transfer-encoding', 'upgrade']);
const USER = 'corral';

export class EgressProxy {
  readonly listening: Promise<void>;
  private readonly server: http.Server;
  private readonly caps = new Map<string, string>();
  private readonly capOf = new Map<string, string>();
  private address?: AddressInfo;
  /** Loopback ports of the host's own servers: never a destination (a hand must not reach them through here). */
  private readonly ownPorts = new Set<number>();

  constructor(private readonly source: EgressSource) {
    this.server = http.createServer((req, res) => {
      this.handle(req, res).catch((err: unknown) => {
        console.error('corral: egress proxy:', err instanceof Error ? err.message : err);
        if (!res.headersSent) refuse(res, 502, 'the egress proxy failed (see the host log)');
        else res.destroy();
      });
    });
    this.server.on('connect', (req, socket: net.Socket, head) => this.tunnel(req, socket, head));
    this.server.on('clientError', (_err, socket) => socket.destroy());
    this.listening = new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(0, '127.0.0.1', () => {
        this.server.off('error', reject);
        this.address = this.server.address() as AddressInfo;
        this.ownPorts.add(this.address.port);
        resolve();
      });
    });
    this.listening.catch(() => {});
  }

  get port(): number | undefined {
    return this.address?.port;
  }

  /** Ports of the host's other loopback servers (model proxy, git proxy, API) the proxy must never forward to. */
  protect(port: number | undefined): void {
    if (port) this.ownPorts.add(port);
  }

  /** The proxy URL for a session's hand, given the address the hand reaches the proxy at. */
  proxyUrl(sessionId: string, reach: { host: string; port: number }): string {
    let cap = this.capOf.get(sessionId);
    if (!cap) {
      cap = `corral-egress-${crypto.randomBytes(24).toString('base64url')}`;
      this.capOf.set(sessionId, cap);
      this.caps.set(cap, sessionId);
    }
    return `http://${USER}:${cap}@${reach.host}:${reach.port}`;
  }

  close(): Promise<void> {
    return new Promise((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
  }

  private sessionOf(req: http.IncomingMessage): string | undefined {
    const m = /^Basic\s+(\S+)$/i.exec(req.headers['proxy-authorization'] ?? '');
    if (!m) return undefined;
    const [user, cap] = Buffer.from(m[1]!, 'base64').toString('utf8').split(':');
    return user === USER && cap ? this.caps.get(cap) : undefined;
  }

  private forbidden(host: string, port: number): boolean {
    const h = host.replace(/^\[|\]$/g, '').toLowerCase();
    const loopback = h === 'localhost' || h === '::1' || h.startsWith('127.');
    return loopback && this.ownPorts.has(port);
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const sessionId = this.sessionOf(req);
    if (!sessionId) return refuse(res, 407, 'this proxy needs the session\'s proxy credentials', { 'proxy-authenticate': 'Basic realm="corral"' });
    let target: URL;
    try {
      target = new URL(req.url ?? '');
    } catch {
      return refuse(res, 400, 'a proxy request needs an absolute http:// URL');
    }
    if (target.protocol !== 'http:') return refuse(res, 400, 'only http:// is proxied this way (HTTPS goes through CONNECT)');
    const port = Number(target.port || 80);
    if (this.forbidden(target.hostname, port)) return refuse(res, 403, 'that address is the host\'s own service');
    const creds = (await this.source.resolveAll(sessionId, { use: 'egress', host: target.hostname })) as ResolvedCredential<'environment_variable'>[];
    const headers: http.OutgoingHttpHeaders = {};
    for (const [k, v] of Object.entries(req.headers)) if (!HOP_BY_HOP.has(k) && v !== undefined) headers[k] = v;
    const used = new Set<ResolvedCredential>();
    const swap = (text: string, where: 'header' | 'body') => {
      let out = text;
      for (const c of creds) {
        const loc = c.credential.auth.injection_location as { header?: boolean; body?: boolean } | undefined;
        if (!(loc?.[where] ?? where === 'header')) continue;
        const ph = placeholderOf(c.credential.id);
        if (out.includes(ph)) {
          out = out.split(ph).join(c.secret.secret_value);
          used.add(c);
        }
      }
      return out;
    };
    let body: Buffer | undefined;
    if (creds.length > 0) {
      for (const [k, v] of Object.entries(headers)) {
        if (k === 'host') continue;
        headers[k] = Array.isArray(v) ? v.map((x) => swap(x, 'header')) : typeof v === 'string' ? swap(v, 'header') : v;
      }
      if (creds.some((c) => (c.credential.auth.injection_location as { body?: boolean } | undefined)?.body)) {
        body = await readBody(req);
        if (!body) return refuse(res, 413, `bodies over ${MAX_BODY_BYTES} bytes are not proxied to hosts with a credential`);
        const text = body.toString('latin1');
        const swapped = swap(text, 'body');
        if (swapped !== text) {
          body = Buffer.from(swapped, 'latin1');
          headers['content-length'] = String(body.length);
          delete headers['transfer-encoding'];
        }
      }
    }
    for (const c of used) c.recordUse(`${req.method} ${target.origin}`);
    await new Promise<void>((resolve) => {
      const up = http.request(target, { method: req.method, headers, setHost: false }, (upRes) => {
        const out: http.OutgoingHttpHeaders = {};
        for (const [k, v] of Object.entries(upRes.headers)) if (!HOP_BY_HOP.has(k) && v !== undefined) out[k] = v;
        res.writeHead(upRes.statusCode ?? 502, out);
        upRes.pipe(res);
        upRes.on('end', resolve);
        upRes.on('error', () => (res.destroy(), resolve()));
      });
      up.on('error', (err) => {
        if (!res.headersSent) refuse(res, 502, `${target.host} could not be reached: ${err.message}`);
        else res.destroy();
        resolve();
      });
      if (body) up.end(body);
      else req.pipe(up);
    });
  }

  /** CONNECT: an opaque tunnel (no substitution is possible inside TLS). */
  private tunnel(req: http.IncomingMessage, socket: net.Socket, head: Buffer): void {
    socket.on('error', () => socket.destroy());
    const end = (status: string): void => void socket.end(`HTTP/1.1 ${status}\r\n\r\n`);
    if (!this.sessionOf(req)) return end('407 Proxy Authentication Required\r\nProxy-Authenticate: Basic realm="corral"');
    const m = /^(\[[^\]]+\]|[^:]+):(\d+)$/.exec(req.url ?? '');
    if (!m) return end('400 Bad Request');
    const host = m[1]!.replace(/^\[|\]$/g, '');
    const port = Number(m[2]);
    if (this.forbidden(host, port)) return end('403 Forbidden');
    const up = net.connect(port, host, () => {
      socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length) up.write(head);
      up.pipe(socket).pipe(up);
    });
    up.on('error', () => end('502 Bad Gateway'));
    socket.on('close', () => up.destroy());
  }
}

function readBody(req: http.IncomingMessage): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY_BYTES) {
        req.destroy();
        resolve(undefined);
      } else parts.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(parts)));
    req.on('error', reject);
  });
}

function refuse(res: http.ServerResponse, status: number, message: string, extra: http.OutgoingHttpHeaders = {}): void {
  res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', ...extra });
  res.end(`corral egress proxy: ${message}\n`);
}
