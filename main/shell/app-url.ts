import fs from 'node:fs';
import path from 'node:path';

/**
 * Where the window's page comes from: the built renderer, served under our own `corral://app/`
 * scheme (not file://, where 'self' in the page's CSP would admit any file on the disk, and
 * any page on the disk would count as ours), or, during `electron-vite dev`, the Vite dev
 * server. Plain Node, no electron: the shell uses it to serve the page and to vet navigations
 * and IPC senders.
 */
export type AppLocation = { kind: 'bundle'; rendererDir: string } | { kind: 'dev'; origin: string; url: string };

/** The scheme the built renderer is served under (registered as standard and secure). */
export const APP_SCHEME = 'corral';
export const APP_ORIGIN = `${APP_SCHEME}://app`;

/**
 * The page's Content-Security-Policy, also sent as a header with every page served under
 * corral:// (renderer/index.html carries the same one as a meta tag for `serve` and the dev
 * server; test/shell checks they agree).
 */
export const APP_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'none'; object-src 'none'; frame-ancestors 'none'";

/** The page to load: `devUrl` (ELECTRON_RENDERER_URL) when given, else the built renderer in `rendererDir`. */
export function appLocation(rendererDir: string, devUrl: string | undefined): AppLocation {
  if (devUrl) {
    const url = new URL(devUrl);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error(`renderer dev URL must be http(s): ${devUrl}`);
    return { kind: 'dev', origin: url.origin, url: url.href };
  }
  return { kind: 'bundle', rendererDir: path.resolve(rendererDir) };
}

/** The URL the window loads. */
export function appUrl(loc: AppLocation): string {
  return loc.kind === 'dev' ? loc.url : `${APP_ORIGIN}/index.html`;
}

/**
 * True when `url` is our own page: index.html under corral://app (any query or fragment, since
 * the renderer keeps `?session=` in its URL), or any page of the dev server's origin.
 */
export function isAppUrl(loc: AppLocation, url: string): boolean {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return false;
  }
  if (loc.kind === 'dev') return parsed.origin === loc.origin;
  return parsed.protocol === `${APP_SCHEME}:` && parsed.host === 'app' && parsed.pathname === '/index.html';
}

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.woff': 'font/woff',
  '.map': 'application/json',
};

/**
 * The file of the built renderer a corral:// URL names, or undefined when it names none: other
 * hosts, paths leading out of the renderer folder (`..`, encoded or not, or a symbolic link),
 * folders and missing files.
 */
export function bundleFile(loc: Extract<AppLocation, { kind: 'bundle' }>, url: string): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return undefined;
  }
  if (parsed.protocol !== `${APP_SCHEME}:` || parsed.host !== 'app') return undefined;
  let rel: string;
  try {
    rel = decodeURIComponent(parsed.pathname);
  } catch {
    return undefined;
  }
  if (rel.includes('\0')) return undefined;
  let root: string;
  let file: string;
  try {
    root = fs.realpathSync(loc.rendererDir);
    file = fs.realpathSync(path.join(root, path.normalize(`/${rel}`)));
  } catch {
    return undefined; // no such file (or no built renderer at all)
  }
  if (!file.startsWith(root + path.sep)) return undefined;
  return fs.statSync(file).isFile() ? file : undefined;
}

/** Answers a corral:// request from the built renderer (the shell's protocol handler). */
export async function serveBundle(loc: Extract<AppLocation, { kind: 'bundle' }>, request: Request): Promise<Response> {
  if (request.method !== 'GET' && request.method !== 'HEAD') return new Response('method not allowed', { status: 405 });
  const file = bundleFile(loc, request.url);
  if (!file) return new Response('not found', { status: 404, headers: { 'content-type': 'text/plain' } });
  const type = TYPES[path.extname(file).toLowerCase()] ?? 'application/octet-stream';
  const headers: Record<string, string> = { 'content-type': type, 'x-content-type-options': 'nosniff', 'cache-control': 'no-cache' };
  // The same policy as renderer/index.html's meta tag, where Electronegativity checks it.
  if (type.startsWith('text/html')) headers['content-security-policy'] = APP_CSP; // eng-disable CSP_GLOBAL_CHECK
  return new Response(request.method === 'HEAD' ? null : await fs.promises.readFile(file), { status: 200, headers });
}
