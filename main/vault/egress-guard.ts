/**
 * Where the egress proxy may connect. The proxy runs in the host, so without a guard a hand could
 * use it to reach what only the host reaches: its own API and proxies, other loopback services,
 * link-local metadata endpoints. A target on this machine (loopback, unspecified, one of its own
 * interface addresses) or link-local is refused unless a credential in the session's scope names
 * that host explicitly (not by wildcard, not `unrestricted`); the host's own listening ports are
 * refused always. Names are resolved here and the connection goes to the address that was
 * checked, so a name that resolves differently a moment later (DNS rebinding) cannot slip past.
 */
import dns from 'node:dns/promises';
import net from 'node:net';
import os from 'node:os';

/** The answer: the address to connect to, or why not. */
export type Verdict = { ok: true; address: string; family: 4 | 6 } | { ok: false; why: string };

export interface GuardInput {
  host: string;
  port: number;
  /** Some credential in the session's scope names this host exactly. */
  named: boolean;
  /** The host's own listening ports (API, model, git and egress proxies). */
  ownPorts: ReadonlySet<number>;
  /** `host:port` pairs reachable without a credential naming them (tests' loopback servers). */
  allowLocal?: ReadonlySet<string>;
}

/** Loopback, unspecified and link-local; IPv4-mapped IPv6 forms are checked against the IPv4 rules. */
const SPECIAL = new net.BlockList();
SPECIAL.addSubnet('127.0.0.0', 8, 'ipv4');
SPECIAL.addSubnet('0.0.0.0', 8, 'ipv4');
SPECIAL.addSubnet('169.254.0.0', 16, 'ipv4');
SPECIAL.addAddress('::1', 'ipv6');
SPECIAL.addAddress('::', 'ipv6');
SPECIAL.addSubnet('fe80::', 10, 'ipv6');

const special = (ip: string): boolean => SPECIAL.check(ip, net.isIPv6(ip) ? 'ipv6' : 'ipv4');

function ownAddresses(): Set<string> {
  const out = new Set<string>();
  for (const list of Object.values(os.networkInterfaces())) for (const a of list ?? []) out.add(a.address.toLowerCase().replace(/%.*$/, ''));
  return out;
}

/** Decides whether the proxy may connect to `host:port`, and to which address. */
export async function checkTarget(g: GuardInput): Promise<Verdict> {
  const host = g.host.replace(/^\[|\]$/g, '').toLowerCase();
  let addresses: { address: string; family: number }[];
  if (net.isIP(host)) addresses = [{ address: host, family: net.isIP(host) }];
  else {
    try {
      addresses = await dns.lookup(host, { all: true, verbatim: true });
    } catch (err) {
      return { ok: false, why: `${host} does not resolve (${(err as NodeJS.ErrnoException).code ?? 'error'})` };
    }
  }
  if (addresses.length === 0) return { ok: false, why: `${host} does not resolve` };
  const own = ownAddresses();
  // Every address counts: a name resolving to one public and one loopback address is local.
  const mine = new net.BlockList();
  for (const a of own) mine.addAddress(a, net.isIPv6(a) ? 'ipv6' : 'ipv4');
  const local = addresses.some((a) => special(a.address) || mine.check(a.address, net.isIPv6(a.address) ? 'ipv6' : 'ipv4'));
  if (local && g.ownPorts.has(g.port)) return { ok: false, why: `${host}:${g.port} is the host's own service` };
  if (local && !g.named && !g.allowLocal?.has(`${host}:${g.port}`)) {
    return { ok: false, why: `${host} is this machine or a link-local address; only a credential that names it in allowed_hosts opens it` };
  }
  const first = addresses[0]!;
  return { ok: true, address: first.address, family: first.family === 6 ? 6 : 4 };
}
