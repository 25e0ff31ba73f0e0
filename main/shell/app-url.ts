import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/**
 * Where the window's page comes from: the built renderer on disk, or (during `electron-vite dev`)
 * the Vite dev server. Plain Node, no electron: the shell uses it to vet navigations and IPC
 * senders.
 */
export type AppLocation = { kind: 'file'; indexHtml: string } | { kind: 'dev'; origin: string; url: string };

/** The page to load: `devUrl` (ELECTRON_RENDERER_URL) when given, else `rendererDir/index.html`. */
export function appLocation(rendererDir: string, devUrl: string | undefined): AppLocation {
  if (devUrl) {
    const url = new URL(devUrl);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error(`renderer dev URL must be http(s): ${devUrl}`);
    return { kind: 'dev', origin: url.origin, url: url.href };
  }
  return { kind: 'file', indexHtml: path.resolve(rendererDir, 'index.html') };
}

/** The URL the window loads. */
export function appUrl(loc: AppLocation): string {
  return loc.kind === 'dev' ? loc.url : pathToFileURL(loc.indexHtml).href;
}

/**
 * True when `url` is our own page: the same index.html on disk (any query or fragment, since
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
  if (parsed.protocol !== 'file:' || (parsed.host !== '' && parsed.host !== 'localhost')) return false;
  try {
    return path.resolve(fileURLToPath(parsed)) === loc.indexHtml;
  } catch {
    return false;
  }
}
