/**
 * The sandbox's allow-list rule, for the egress proxy serving a sandboxed hand: the proxy must
 * not become a way around the hand's network policy. Entries as the sandbox runtime reads them
 * (its domain-pattern.ts): `example.com` exactly, `*.example.com` any strict subdomain (never
 * an IP address), either with an optional `:port`; `[v6]` and `[v6]:port` for IPv6 literals.
 */
import net from 'node:net';

/** Whether `host:port` is on the list. */
export function onAllowList(list: readonly string[], host: string, port: number): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  return list.some((entry) => {
    const { pattern, port: want } = split(entry.toLowerCase());
    if (want !== undefined && want !== port) return false;
    if (pattern.startsWith('*.')) return net.isIP(h) === 0 && h.endsWith(pattern.slice(1));
    return h === pattern;
  });
}

function split(entry: string): { pattern: string; port?: number } {
  const v6 = /^\[([^\]]+)\](?::(\d{1,5}))?$/.exec(entry);
  if (v6) return { pattern: v6[1]!, port: v6[2] ? Number(v6[2]) : undefined };
  const i = entry.lastIndexOf(':');
  if (i < 0 || entry.indexOf(':') !== i) return { pattern: entry };
  const port = entry.slice(i + 1);
  return /^[1-9]\d{0,4}$/.test(port) ? { pattern: entry.slice(0, i), port: Number(port) } : { pattern: entry };
}
