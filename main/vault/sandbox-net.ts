/**
 * A sandboxed local hand's routes to the host's proxies (see main/hands/local/sandbox-relays.ts):
 * for each provisioning, fresh gateway names bound to the session, one for the git proxy when the
 * session names vaults (a git_token may be among them) and one for the egress proxy when it has
 * `environment_variable` credentials; the hand's variables point its HTTP clients at the egress
 * relay and trust the egress CA.
 */
import type { SandboxNet } from '../hands/local/sandbox-relays';
import { SANDBOX_EGRESS_PORT, SANDBOX_GIT_PORT } from '../hands/local/sandbox-relays';
import type { EgressProxy } from './egress-proxy';
import type { GitProxy } from './git-proxy';
import { dropGatewayNames, gatewayName, startGateway } from './sandbox-gateway';
import type { Vault } from './vault';

export function sandboxNetFor(o: { vault: Vault; gitProxy: GitProxy; egressProxy: EgressProxy }): {
  sandboxNet(sessionId: string, allowedHosts: readonly string[]): Promise<SandboxNet | undefined>;
  /** Forgets a session's names (its capabilities were revoked). */
  revoke(sessionId: string): void;
  close(): void;
} {
  const drops = new Set<() => void>();
  const name = (sessionId: string, attach: (s: import('node:net').Socket) => void) => {
    const n = gatewayName({ sessionId, attach });
    drops.add(n.drop);
    return n.host;
  };
  return {
    async sandboxNet(sessionId, allowedHosts) {
      const git = o.vault.sessionVaults(sessionId).length > 0;
      const placeholders = await o.vault.environmentPlaceholders(sessionId);
      const egress = Object.keys(placeholders).length > 0;
      if (!git && !egress) return undefined;
      await startGateway();
      const net: SandboxNet = { relays: [], env: {} };
      if (git) net.relays.push({ port: SANDBOX_GIT_PORT, host: name(sessionId, (s) => o.gitProxy.attach(s, sessionId)) });
      if (egress) {
        const allowed = [...allowedHosts];
        net.relays.push({ port: SANDBOX_EGRESS_PORT, host: name(sessionId, (s) => o.egressProxy.attach(s, sessionId, allowed)) });
        const url = `http://127.0.0.1:${SANDBOX_EGRESS_PORT}`;
        // NO_PROXY keeps only the sandbox's own loopback: the runtime's private ranges cannot be
        // reached directly from the sandbox anyway, and through the proxy a credential may name them.
        const direct = 'localhost,127.0.0.1,::1';
        net.env = { HTTP_PROXY: url, http_proxy: url, HTTPS_PROXY: url, https_proxy: url, ALL_PROXY: url, all_proxy: url, NO_PROXY: direct, no_proxy: direct };
        net.caPem = await o.egressProxy.ca?.certPem().catch(() => undefined);
      }
      return net;
    },
    revoke: dropGatewayNames,
    close() {
      for (const d of drops) d();
      drops.clear();
    },
  };
}
