/**
 * One request through the egress proxy: the credentials' placeholders swapped for their values
 * (header values and/or the body, as each credential's `injection_location` says), then sent to
 * the address the guard checked, over HTTP or HTTPS, and the answer streamed back unchanged.
 */
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import tls from 'node:tls';
import type { ResolvedCredential } from './vault';
import { placeholderOf } from './vault-types';
import { unecho } from './egress-unecho';

const unechoText = (text: string, pairs: { value: string; placeholder: string }[]) => pairs.reduce((t, p) => t.split(p.value).join(p.placeholder), text);

/** Bodies are read whole to substitute in them; larger ones are refused (413). */
const MAX_BODY_BYTES = 16 * 1024 * 1024;
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-authenticate', 'proxy-authorization', 'proxy-connection', 'te', 'trailer', 'transfer-encoding', 'upgrade']);

/** Where one request goes. */
export interface ForwardTarget {
  url: URL;
  /** The address the guard resolved and checked; the connection goes there and nowhere else. */
  address: string;
  /** Extra trust for HTTPS upstreams (tests' self-signed servers), on top of the system's roots. */
  upstreamCa?: string;
}

export function refuse(res: http.ServerResponse, status: number, message: string, extra: http.OutgoingHttpHeaders = {}): void {
  res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', ...extra });
  res.end(`corral egress proxy: ${message}\n`);
}

/** Names a credential explicitly allows (not by wildcard or `unrestricted`). */
export function namesHost(c: ResolvedCredential, host: string): boolean {
  const n = (c.credential.auth as { networking?: { type: string; allowed_hosts?: string[] } }).networking;
  return n?.type === 'limited' && (n.allowed_hosts ?? []).some((h) => h.toLowerCase() === host.toLowerCase());
}

export async function forward(req: http.IncomingMessage, res: http.ServerResponse, target: ForwardTarget, creds: ResolvedCredential[]): Promise<void> {
  const envCreds = creds as ResolvedCredential<'environment_variable'>[];
  const headers: http.OutgoingHttpHeaders = {};
  for (const [k, v] of Object.entries(req.headers)) if (!HOP_BY_HOP.has(k) && v !== undefined) headers[k] = v;
  const used = new Set<ResolvedCredential>();
  const swap = (text: string, where: 'header' | 'body') => {
    let out = text;
    for (const c of envCreds) {
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
  if (envCreds.length > 0) {
    for (const [k, v] of Object.entries(headers)) {
      if (k === 'host') continue;
      headers[k] = Array.isArray(v) ? v.map((x) => swap(x, 'header')) : typeof v === 'string' ? swap(v, 'header') : v;
    }
    if (envCreds.some((c) => (c.credential.auth.injection_location as { body?: boolean } | undefined)?.body)) {
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
  const { url } = target;
  for (const c of used) c.recordUse(`${req.method} ${url.origin}`);
  // The answer is searched for the values sent (egress-unecho.ts): it must come uncompressed.
  const echoed = [...used].map((c) => ({ value: (c as ResolvedCredential<'environment_variable'>).secret.secret_value, placeholder: placeholderOf(c.credential.id) }));
  if (echoed.length > 0) headers['accept-encoding'] = 'identity';
  const secure = url.protocol === 'https:';
  const name = url.hostname.replace(/^\[|\]$/g, '');
  const options: https.RequestOptions = {
    method: req.method,
    headers,
    setHost: false,
    host: target.address,
    port: Number(url.port || (secure ? 443 : 80)),
    path: `${url.pathname}${url.search}`,
    // The certificate is checked against the name the hand asked for, not the address.
    ...(secure ? { servername: net.isIP(name) ? undefined : name, checkServerIdentity: (_h: string, cert: tls.PeerCertificate) => tls.checkServerIdentity(name, cert) } : {}),
    ...(secure && target.upstreamCa ? { ca: [...tls.rootCertificates, target.upstreamCa] } : {}),
  };
  await new Promise<void>((resolve) => {
    const up = (secure ? https : http).request(options, (upRes) => {
      const out: http.OutgoingHttpHeaders = {};
      for (const [k, v] of Object.entries(upRes.headers)) if (!HOP_BY_HOP.has(k) && v !== undefined) out[k] = v;
      const encoded = (upRes.headers['content-encoding'] ?? 'identity') !== 'identity';
      if (echoed.length > 0 && encoded) {
        // Compressed although asked not to be: it cannot be searched, so it is not passed on.
        upRes.resume();
        refuse(res, 502, `${url.host} answered a request carrying a credential with a compressed body, which the proxy cannot check for the value`);
        return resolve();
      }
      if (echoed.length > 0) {
        for (const [k, v] of Object.entries(out)) if (typeof v === 'string') out[k] = unechoText(v, echoed);
        delete out['content-length']; // the placeholder's length differs from the value's
      }
      res.writeHead(upRes.statusCode ?? 502, out);
      (echoed.length > 0 ? upRes.pipe(unecho(echoed)) : upRes).pipe(res);
      upRes.on('end', resolve);
      upRes.on('error', () => (res.destroy(), resolve()));
    });
    up.on('error', (err) => {
      if (!res.headersSent) refuse(res, 502, `${url.host} could not be reached: ${err.message}`);
      else res.destroy();
      resolve();
    });
    if (body) up.end(body);
    else req.pipe(up);
  });
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
