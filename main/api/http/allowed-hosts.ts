/**
 * The Host names a server listening beyond loopback answers to. A browser page on any site can
 * point a DNS name at this machine (DNS rebinding): the Host header check is what stops it, so
 * listening on 0.0.0.0 or a LAN address needs the names written down (`--allowed-hosts`).
 */

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '::1']);

export function isLoopback(hostname: string): boolean {
  return LOOPBACK.has(hostname);
}

/**
 * `a:8787,b` → the accepted Host header values. A name without a port is accepted bare (port
 * 80/443 behind a proxy) and on the serving port. Undefined when the list is unset or empty.
 */
export function parseAllowedHosts(text: string | undefined): { names: string[] } | { problem: string } | undefined {
  if (text === undefined || text.trim() === '') return undefined;
  const names: string[] = [];
  for (const raw of text.split(',')) {
    const entry = raw.trim().toLowerCase();
    if (!entry) continue;
    if (!/^(\[[0-9a-f:.]+\]|[a-z0-9.-]+)(:\d{1,5})?$/.test(entry)) return { problem: `--allowed-hosts: '${raw.trim()}' is not a host name with an optional :port` };
    names.push(entry);
  }
  return names.length ? { names } : undefined;
}

/** The Host header values accepted for these names on this port. */
export function hostHeaderValues(names: readonly string[], port: number): string[] {
  const out = new Set<string>();
  for (const n of names) {
    if (/:\d+$/.test(n)) out.add(n);
    else {
      out.add(n);
      out.add(`${n}:${port}`);
    }
  }
  return [...out];
}
