/**
 * How a sandboxed local hand reaches the host's git and egress proxies. The sandbox has no
 * network of its own: its only way out is the runtime's proxy, reached on `localhost:3128`
 * inside, which presents each connection under the command's random id and applies that
 * command's allow list. The runtime keeps one upstream per process (`parentProxy`), so a
 * session's proxy capability cannot ride on it. Instead:
 *
 * - the runtime is configured (once per process) to send CONNECTs for `*.vault.corral.invalid`
 *   to a Unix socket of the host (`mitmProxy`, the runtime's route to an external proxy), the
 *   sandbox gateway (main/vault/sandbox-gateway.ts);
 * - each sandboxed hand of a session with vault routes is given random gateway names, one per
 *   proxy, and only its own command's allow list names them: another sandbox presenting a name
 *   it learnt is refused by the runtime ("not on the allow list"), and the gateway binds a name
 *   to its session on the host side, so no capability ever enters the sandbox;
 * - inside, before the shell starts, one socat relay per proxy listens on a fixed loopback port
 *   of the sandbox's own network namespace and CONNECTs through the runtime's proxy to its
 *   gateway name (the runtime's proxy credentials are already in the sandbox's environment).
 *   `git` talks to the git relay directly (127.0.0.1 is in the runtime's NO_PROXY) and HTTP
 *   clients use the egress relay as their proxy.
 */

/** The gateway names' domain: `.invalid` never resolves anywhere, so only the runtime's route leads there. */
export const GATEWAY_DOMAIN = 'vault.corral.invalid';

/** The loopback port, inside the sandbox, where `git` reaches the git proxy. */
export const SANDBOX_GIT_PORT = 3141;
/** The loopback port, inside the sandbox, of the egress proxy (HTTP_PROXY). */
export const SANDBOX_EGRESS_PORT = 3142;

/** What a sandboxed hand's network gets beyond its allow list, from the host's vault. */
export interface SandboxNet {
  /** One relay per proxy: the port inside the sandbox and the gateway name (`<random>.vault.corral.invalid`). */
  relays: { port: number; host: string }[];
  /** Variables set inside once the relays listen (HTTP_PROXY and friends), over the runtime's own. */
  env: Record<string, string>;
  /** The egress proxy's CA (PEM), written into the hand's TMPDIR with a bundle and trusted through the usual variables. */
  caPem?: string;
}

/** Quotes a string for bash. */
const shq = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

const BUNDLES = ['/etc/ssl/certs/ca-certificates.crt', '/etc/pki/tls/certs/ca-bundle.crt', '/etc/ssl/cert.pem', '/etc/ssl/ca-bundle.pem'];

/**
 * The script run inside the sandbox before the shell: relays started and waited for (their
 * port listening in /proc/net/tcp, never a test connection, which would reach the proxy), the
 * CA written, the variables exported. The runtime's proxy credentials are read from its
 * HTTP_PROXY (percent-decoded: socat sends them as given).
 */
export function relayScript(net: SandboxNet): string {
  if (net.relays.length === 0 && Object.keys(net.env).length === 0) return '';
  const lines: string[] = [];
  if (net.relays.length > 0) {
    lines.push('__corral_a=${HTTP_PROXY#http://}; __corral_a=${__corral_a%@*}; __corral_a=$(printf %b "${__corral_a//%/\\\\x}")');
    for (const r of net.relays) {
      if (!/^[a-z0-9.-]+$/.test(r.host) || !Number.isInteger(r.port)) throw new Error(`a bad relay: ${r.host}:${r.port}`);
      lines.push(
        `(exec socat TCP4-LISTEN:${r.port},bind=127.0.0.1,fork,reuseaddr PROXY:localhost:${r.host}:80,proxyport=3128,proxyauth="$__corral_a" </dev/null >/dev/null 2>&1 &)`,
      );
    }
    lines.push('unset __corral_a');
    const ports = net.relays.map((r) => `:${r.port.toString(16).toUpperCase().padStart(4, '0')} 00000000:0000 0A`);
    // Up to 2 s for every relay to listen (socat starts in milliseconds).
    lines.push(`for __corral_i in $(seq 200); do __corral_ok=1; for __corral_p in ${ports.map(shq).join(' ')}; do grep -qF "$__corral_p" /proc/net/tcp 2>/dev/null || __corral_ok=; done; [ -n "$__corral_ok" ] && break; sleep 0.01; done; unset __corral_i __corral_ok __corral_p`);
  }
  if (net.caPem) {
    lines.push(
      'mkdir -p "$TMPDIR/corral-ca"',
      `printf '%s\\n' ${shq(net.caPem.trim())} > "$TMPDIR/corral-ca/egress-ca.pem"`,
      `: > "$TMPDIR/corral-ca/ca-bundle.pem"; for __corral_b in ${BUNDLES.join(' ')}; do if [ -r "$__corral_b" ]; then cat "$__corral_b" >> "$TMPDIR/corral-ca/ca-bundle.pem"; echo >> "$TMPDIR/corral-ca/ca-bundle.pem"; break; fi; done; unset __corral_b`,
      'cat "$TMPDIR/corral-ca/egress-ca.pem" >> "$TMPDIR/corral-ca/ca-bundle.pem"',
      'export SSL_CERT_FILE="$TMPDIR/corral-ca/ca-bundle.pem" CURL_CA_BUNDLE="$TMPDIR/corral-ca/ca-bundle.pem" REQUESTS_CA_BUNDLE="$TMPDIR/corral-ca/ca-bundle.pem" GIT_SSL_CAINFO="$TMPDIR/corral-ca/ca-bundle.pem" NODE_EXTRA_CA_CERTS="$TMPDIR/corral-ca/egress-ca.pem"',
    );
  }
  for (const [k, v] of Object.entries(net.env)) {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(k)) throw new Error(`a bad variable name: ${k}`);
    lines.push(`export ${k}=${shq(v)}`);
  }
  return `${lines.join('\n')}\n`;
}

/** The allow-list entries that let a command's connections reach its own gateway names (port 80 only). */
export function relayAllowList(net: SandboxNet | undefined): string[] {
  return (net?.relays ?? []).map((r) => `${r.host}:80`);
}
