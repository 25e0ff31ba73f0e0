/**
 * Variables a session's hands get from the host beyond their environment config: the
 * placeholders of the session's `environment_variable` credentials and the egress proxy that
 * swaps them for the values (main/vault/egress-proxy.ts). Never a secret value.
 */

/** How a hand reaches a port on this machine's loopback (undefined: it cannot). */
export type ReachHost = (port: number) => Promise<{ host: string; port: number } | undefined>;

/** The host's source of those variables. */
export interface HandEnvSource {
  envFor(sessionId: string, reach: ReachHost): Promise<Record<string, string>>;
}

/** A local hand reaches loopback unless sandboxed (the sandbox's own proxy never connects to loopback). */
export const localReach = (sandboxed: boolean): ReachHost => async (port) => (sandboxed ? undefined : { host: '127.0.0.1', port });
