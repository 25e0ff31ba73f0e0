/**
 * Variables a session's hands get from the host beyond their environment config: the
 * placeholders of the session's `environment_variable` credentials and the egress proxy that
 * swaps them for the values (main/vault/egress-proxy.ts). Never a secret value.
 */

import type { SandboxNet } from './local/sandbox-relays';
import type { SandboxPolicy } from './local/sandbox';

/** How a hand reaches a port on this machine's loopback (undefined: it cannot). */
export type ReachHost = (port: number) => Promise<{ host: string; port: number } | undefined>;

/**
 * A private key held by the host's vault (its contents, never a path), offered to an SSH host
 * before the key files. `used` records the login in the session's ledger.
 */
export interface VaultSshKey {
  /** The credential's name and id, for messages. */
  name: string;
  /** The credential's id (an `ssh` environment's `identity_credential_id` names one). */
  id?: string;
  privateKey: string;
  passphrase?: string;
  used(target: string): void;
}

/** The host's source of those variables (and of the session's SSH keys). */
export interface HandEnvSource {
  /**
   * The session's `ssh_private_key` credentials that cover `host`, in scope order. Without a
   * session (a hand the warm pool makes ahead): those any session gets, the host's default
   * vault's keys scoped to `host`.
   */
  sshKeys?(sessionId: string | undefined, host: string): Promise<VaultSshKey[]>;
  /** `placeCa` puts the egress CA on a remote hand; without it the hand runs on this machine. */
  envFor(sessionId: string, reach: ReachHost, placeCa?: PlaceCa): Promise<Record<string, string>>;
  /**
   * A sandboxed local hand's routes to the git and egress proxies (through the sandbox gateway),
   * given the hand's own allow list; undefined when the session needs none.
   */
  sandboxNet?(sessionId: string, allowedHosts: readonly string[]): Promise<SandboxNet | undefined>;
}

/** A sandboxed local hand's policy with the session's proxy routes added (hands/local/sandbox-relays.ts). */
export async function withSandboxNet(policy: SandboxPolicy, source: HandEnvSource | undefined, sessionId: string): Promise<SandboxPolicy> {
  const net = await source?.sandboxNet?.(sessionId, policy.allowedHosts);
  return net ? { ...policy, net } : policy;
}

/** A local hand reaches loopback unless sandboxed (the sandbox's own proxy never connects to loopback). */
export const localReach = (sandboxed: boolean): ReachHost => async (port) => (sandboxed ? undefined : { host: '127.0.0.1', port });

/** Where a hand holds the egress proxy's CA: the CA alone, and a bundle of the hand's own roots plus it. */
export interface CaFiles {
  caFile: string;
  bundleFile: string;
}

/**
 * Puts the egress CA (PEM) on a hand and says where; undefined when it cannot. Without it a
 * local hand on this machine is given the host's own copies.
 */
export type PlaceCa = (pem: string) => Promise<CaFiles | undefined>;

/**
 * The variables that make common clients trust the CA: OpenSSL (curl, wget, Python's ssl, git)
 * through the bundle, which also holds the hand's own roots so other hosts still verify; Node
 * adds NODE_EXTRA_CA_CERTS to its own roots.
 */
export function caVariables(f: CaFiles): Record<string, string> {
  return { SSL_CERT_FILE: f.bundleFile, CURL_CA_BUNDLE: f.bundleFile, REQUESTS_CA_BUNDLE: f.bundleFile, GIT_SSL_CAINFO: f.bundleFile, NODE_EXTRA_CA_CERTS: f.caFile };
}

/** The system bundles looked for on a hand (Debian/Alpine, Fedora/RHEL, macOS and the BSDs, SUSE). */
export const SYSTEM_BUNDLES = ['/etc/ssl/certs/ca-certificates.crt', '/etc/pki/tls/certs/ca-bundle.crt', '/etc/ssl/cert.pem', '/etc/ssl/ca-bundle.pem'];

/**
 * A PlaceCa for a remote shell: the CA from stdin into the first writable of the user's cache,
 * the temporary folder or Android's /data/local/tmp, and a bundle beside it. With `systemStore`
 * (a container, which is the session's own) the CA is also appended to the system bundle.
 */
export function placeCaOnShell(shell: { exec(command: string, opts?: { stdin?: Buffer; onOutput?: (c: Buffer, s: 'stdout' | 'stderr') => void }): Promise<{ exitCode: number | null }> }, systemStore: boolean): PlaceCa {
  return async (pem) => {
    const script = [
      'set -e',
      'for d in "${XDG_CACHE_HOME:-${HOME:-/nonexistent}/.cache}/corral" "${TMPDIR:-/tmp}/corral-$(id -u 2>/dev/null || echo 0)" /data/local/tmp/corral; do',
      '  if mkdir -p "$d" 2>/dev/null && cat > "$d/egress-ca.pem" 2>/dev/null; then',
      '    : > "$d/ca-bundle.pem"',
      `    for b in ${SYSTEM_BUNDLES.join(' ')}; do if [ -r "$b" ]; then cat "$b" >> "$d/ca-bundle.pem"; echo >> "$d/ca-bundle.pem"; break; fi; done`,
      '    cat "$d/egress-ca.pem" >> "$d/ca-bundle.pem"',
      ...(systemStore
        ? ['    for b in ' + SYSTEM_BUNDLES.join(' ') + '; do if [ -w "$b" ] && ! grep -qF "$(sed -n 2p "$d/egress-ca.pem")" "$b"; then cat "$d/egress-ca.pem" >> "$b"; fi; done']
        : []),
      '    printf "%s" "$d"; exit 0',
      '  fi',
      'done',
      'exit 1',
    ].join('\n');
    let out = '';
    const r = await shell.exec(script, { stdin: Buffer.from(pem), onOutput: (c, s) => void (s === 'stdout' && (out += c.toString())) });
    const dir = out.trim();
    return r.exitCode === 0 && dir ? { caFile: `${dir}/egress-ca.pem`, bundleFile: `${dir}/ca-bundle.pem` } : undefined;
  };
}
