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
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { header, type RequestHead } from './http-framing';
import { forwardedHeaders, ProxyConnection, type Admitted, type ErrorAnswer } from './model-proxy-connection';
import { UpstreamPool } from './upstream-pool';
import { HeldRequests, type HeldRequestsOptions } from './held-requests';
import type { ModelKey } from './vault';

/** What the proxy needs from the vault. */
export interface ModelKeySource {
  modelKey(sessionId: string): Promise<ModelKey | undefined>;
}

export interface ModelProxyOptions {
  keys: ModelKeySource;
  /** The real API's base URL, read at each request; default `ANTHROPIC_BASE_URL`, else https://api.anthropic.com. */
  upstream?: () => string;
  /** Certificates trusted for an HTTPS upstream instead of the system's (tests). */
  upstreamCa?: string[];
  /** How requests sent ahead are filled (brain/held-request.ts); without it they are let go unsent. */
  held?: HeldRequestsOptions;
}

/** Paths a brain may call: the Messages API (and token counting), nothing else the key could do. */
const ALLOWED = new Set(['/v1/messages', '/v1/messages/count_tokens']);
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
  private readonly server: net.Server;
  private readonly caps = new Map<string, { sessionId: string }>();
  private readonly connections = new Set<ProxyConnection>();
  private readonly upstreams = new UpstreamPool();
  /** Requests brains sent ahead, waiting for their tool's result; the host tells it what is logged. */
  readonly held?: HeldRequests;
  private closing = false;
  private address?: AddressInfo;
  /** The upstream's base URL as last read, parsed (it is read at each request). */
  private upstreamUrl?: { base: string; url: URL };

  constructor(private readonly opts: ModelProxyOptions) {
    this.held = opts.held && new HeldRequests(opts.held);
    const held = this.held;
    const gate = { admit: (head: RequestHead) => this.admit(head), ...(held ? { hold: held.hold.bind(held) } : {}) };
    this.server = net.createServer((socket) => {
      const c = new ProxyConnection(socket, gate, this.upstreams);
      this.connections.add(c);
      socket.once('close', () => this.connections.delete(c));
    });
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
    this.warmFor(sessionId);
    return { token, sessionId, revoke: () => this.caps.delete(key) };
  }

  /** Live capabilities (tests check that a brain's dies with it). */
  get liveCapabilities(): number {
    return this.caps.size;
  }

  async close(): Promise<void> {
    this.closing = true;
    this.caps.clear();
    this.held?.clear();
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    for (const c of this.connections) c.close();
    this.upstreams.close();
    await closed;
  }

  /**
   * A brain is given its capability as it is bound to a session, and its first request follows in
   * a few milliseconds: a connection upstream is opened meanwhile (for the real API, its TCP and
   * TLS handshakes), when the session has a model key to send on it and the API has answered
   * this host before.
   */
  private warmFor(sessionId: string): void {
    const upstream = this.upstream();
    if (!upstream) return;
    this.opts.keys.modelKey(sessionId).then(
      (key) => key && !this.closing && this.upstreams.warm(upstream, this.opts.upstreamCa),
      () => {}, // admit reports it, for the request that needs it
    );
  }

  private upstreamBase(): string {
    return (this.opts.upstream?.() ?? process.env.ANTHROPIC_BASE_URL) || 'https://api.anthropic.com';
  }

  /** The real API's base URL as it is now (undefined when it is not a URL). */
  private upstream(): URL | undefined {
    const base = this.upstreamBase();
    if (this.upstreamUrl?.base !== base) {
      if (!URL.canParse(base)) return undefined;
      this.upstreamUrl = { base, url: new URL(base) };
    }
    return this.upstreamUrl.url;
  }

  /** Checks a brain's request and says where it goes, with the session's real key on it. */
  private async admit(head: RequestHead): Promise<Admitted | { error: ErrorAnswer }> {
    const token = presented(head);
    const cap = token ? this.caps.get(digest(token)) : undefined;
    if (!cap) return { error: { status: 401, type: 'authentication_error', message: 'not a live Corral model capability (they are given to brains and end with them)' } };
    const path = head.target.split('?')[0]!.replace(/^\/+/, '/');
    if (head.method !== 'POST' || !ALLOWED.has(path)) {
      return { error: { status: 403, type: 'permission_error', message: `the model proxy forwards POST ${[...ALLOWED].join(' and ')} only, not ${head.method} ${path}` } };
    }
    let key: ModelKey | undefined;
    try {
      key = await this.opts.keys.modelKey(cap.sessionId);
    } catch (err) {
      return { error: { status: 500, type: 'api_error', message: `no model key: ${(err as Error).message}` } };
    }
    if (!key) {
      const message =
        "no model API key: add a model_api_key credential to one of the session's vaults or to the host's default vault, or set ANTHROPIC_API_KEY for Corral";
      return { error: { status: 401, type: 'authentication_error', message } };
    }
    // A line break in a key would end its header and start another upstream.
    if (/[\r\n\0]/.test(key.value)) return { error: { status: 500, type: 'api_error', message: 'the model key holds a line break or NUL: set it again' } };
    const upstream = this.upstream();
    // Not echoed: a brain (and its log) has no business with the host's configuration.
    if (!upstream) return { error: { status: 500, type: 'api_error', message: "the host's model endpoint (ANTHROPIC_BASE_URL) is not a URL" } };
    const suffix = head.target.replace(/^\/+/, '');
    const query = suffix.includes('?') ? suffix.slice(suffix.indexOf('?')) : '';
    const target = `${upstream.pathname.replace(/\/+$/, '')}/${suffix.split('?')[0]}${query}`;
    const credential: [string, string] = key.header === 'x-api-key' ? ['x-api-key', key.value] : ['authorization', `Bearer ${key.value}`];
    const used = key.credential ? () => key.credential!.recordUse(`POST ${upstream.origin}${target.split('?')[0]}`) : () => {};
    return { upstream, path: target, headers: [...forwardedHeaders(head), credential], used, ca: this.opts.upstreamCa, sessionId: cap.sessionId };
  }
}

function presented(head: RequestHead): string | undefined {
  const x = header(head, 'x-api-key');
  if (x) return x;
  const auth = header(head, 'authorization');
  if (auth && /^Bearer /i.test(auth)) return auth.slice(7).trim();
  return undefined;
}
