/**
 * The model proxy: a loopback HTTP server in the host that brains call instead of the model
 * API. A brain's "API key" is a capability — random, bound to one session, revoked when the
 * brain exits — so no brain process ever holds the real key. The proxy checks the
 * capability, puts the session's real model key on the request (x-api-key, or Authorization
 * for bearer tokens), forwards it to the real upstream and streams the answer back as it
 * comes (SSE flows; 429 with retry-after, 529 and every other status pass through unchanged,
 * so the harness's retries work as before). Each forwarded request is one ledger event.
 */
import crypto from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import type { ModelKey } from './vault';

/** What the proxy needs from the vault. */
export interface ModelKeySource {
  modelKey(sessionId: string): Promise<ModelKey | undefined>;
}

export interface ModelProxyOptions {
  keys: ModelKeySource;
  /** The real API's base URL, read at each request; default `ANTHROPIC_BASE_URL`, else https://api.anthropic.com. */
  upstream?: () => string;
}

/** Paths a brain may call: the Messages API (and token counting), nothing else the key could do. */
const ALLOWED = new Set(['/v1/messages', '/v1/messages/count_tokens']);
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-authenticate', 'proxy-authorization', 'proxy-connection', 'te', 'trailer', 'transfer-encoding', 'upgrade']);
const TOKEN_PREFIX = 'corral-cap-';

export interface Capability {
  token: string;
  sessionId: string;
  revoke(): void;
}

const digest = (token: string) => crypto.createHash('sha256').update(token).digest('base64');

export class ModelProxy {
  /** Resolves once the server listens (its `url` is known). */
  readonly listening: Promise<void>;
  private readonly server: http.Server;
  private readonly caps = new Map<string, { sessionId: string }>();
  private readonly agents = { http: new http.Agent({ keepAlive: true }), https: new https.Agent({ keepAlive: true }) };
  private address?: AddressInfo;

  constructor(private readonly opts: ModelProxyOptions) {
    this.server = http.createServer((req, res) => {
      this.handle(req, res).catch((err: unknown) => {
        console.error('corral: model proxy:', err instanceof Error ? err.message : err);
        if (!res.headersSent) sendError(res, 500, 'api_error', 'the model proxy failed (see the host log)');
        else res.destroy();
      });
    });
    this.server.on('clientError', (_err, socket) => socket.destroy());
    this.listening = new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(0, '127.0.0.1', () => {
        this.server.off('error', reject);
        this.address = this.server.address() as AddressInfo;
        resolve();
      });
    });
    this.listening.catch(() => {});
  }

  /** The base URL brains get as ANTHROPIC_BASE_URL (undefined until listening). */
  get url(): string | undefined {
    return this.address ? `http://127.0.0.1:${this.address.port}` : undefined;
  }

  /** A new capability for one session's brain; revoke it when the brain exits. */
  mint(sessionId: string): Capability {
    const token = TOKEN_PREFIX + crypto.randomBytes(32).toString('base64url');
    const key = digest(token);
    this.caps.set(key, { sessionId });
    return { token, sessionId, revoke: () => this.caps.delete(key) };
  }

  /** Live capabilities (tests check that a brain's dies with it). */
  get liveCapabilities(): number {
    return this.caps.size;
  }

  async close(): Promise<void> {
    this.caps.clear();
    await new Promise<void>((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
    this.agents.http.destroy();
    this.agents.https.destroy();
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    req.on('error', () => {});
    res.on('error', () => {});
    const token = presented(req.headers);
    const cap = token ? this.caps.get(digest(token)) : undefined;
    if (!cap) {
      req.resume();
      return sendError(res, 401, 'authentication_error', 'not a live Corral model capability (they are given to brains and end with them)');
    }
    const path = new URL(req.url ?? '/', 'http://proxy').pathname;
    if (req.method !== 'POST' || !ALLOWED.has(path)) {
      req.resume();
      return sendError(res, 403, 'permission_error', `the model proxy forwards POST ${[...ALLOWED].join(' and ')} only, not ${req.method} ${path}`);
    }
    let key: ModelKey | undefined;
    try {
      key = await this.opts.keys.modelKey(cap.sessionId);
    } catch (err) {
      req.resume();
      return sendError(res, 500, 'api_error', `no model key: ${(err as Error).message}`);
    }
    if (!key) {
      req.resume();
      return sendError(
        res,
        401,
        'authentication_error',
        "no model API key: add a model_api_key credential to one of the session's vaults or to the host's default vault, or set ANTHROPIC_API_KEY for Corral",
      );
    }

    const base = (this.opts.upstream?.() ?? process.env.ANTHROPIC_BASE_URL) || 'https://api.anthropic.com';
    const target = new URL(base);
    const suffix = (req.url ?? '/').replace(/^\/+/, '');
    target.pathname = `${target.pathname.replace(/\/+$/, '')}/${suffix.split('?')[0]}`;
    target.search = suffix.includes('?') ? suffix.slice(suffix.indexOf('?')) : '';

    const headers: http.OutgoingHttpHeaders = {};
    for (const [name, value] of Object.entries(req.headers)) {
      const n = name.toLowerCase();
      if (HOP_BY_HOP.has(n) || n === 'host' || n === 'x-api-key' || n === 'authorization') continue;
      headers[n] = value;
    }
    if (key.header === 'x-api-key') headers['x-api-key'] = key.value;
    else headers.authorization = `Bearer ${key.value}`;

    const secure = target.protocol === 'https:';
    const upstream = (secure ? https : http).request(target, { method: 'POST', headers, agent: secure ? this.agents.https : this.agents.http }, (up) => {
      const out: http.OutgoingHttpHeaders = {};
      for (const [name, value] of Object.entries(up.headers)) if (!HOP_BY_HOP.has(name.toLowerCase()) && value !== undefined) out[name] = value;
      res.writeHead(up.statusCode ?? 502, up.statusMessage, out);
      res.flushHeaders();
      // Piped chunk by chunk as it arrives (with backpressure), never collected.
      up.pipe(res);
      up.on('error', () => {});
      // A stream cut upstream is cut here too: the brain sees what it would have seen.
      up.on('close', () => {
        if (!up.complete) res.destroy();
      });
    });
    upstream.on('error', (err) => {
      // Like a refused connection to the API itself: the harness retries a 502.
      if (!res.headersSent) sendError(res, 502, 'api_error', `the model proxy could not reach ${target.origin}: ${err.message}`, true);
      else res.destroy();
    });
    // The brain hung up (an interrupt, or it died): stop the upstream request too.
    res.on('close', () => {
      if (!res.writableFinished) upstream.destroy();
    });
    req.pipe(upstream);
    key.credential?.recordUse(`POST ${target.origin}${target.pathname}`);
  }
}

function presented(headers: http.IncomingHttpHeaders): string | undefined {
  const x = headers['x-api-key'];
  if (typeof x === 'string' && x) return x;
  const auth = headers.authorization;
  if (typeof auth === 'string' && /^Bearer /i.test(auth)) return auth.slice(7).trim();
  return undefined;
}

function sendError(res: http.ServerResponse, status: number, type: string, message: string, retryable = false): void {
  if (res.headersSent || res.destroyed) return;
  // Most of the proxy's own errors are not worth retrying: the same request gets the same answer.
  res.writeHead(status, { 'content-type': 'application/json', ...(retryable ? {} : { 'x-should-retry': 'false' }) });
  res.end(JSON.stringify({ type: 'error', error: { type, message } }));
}
