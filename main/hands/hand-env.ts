/**
 * Variables a session's hands get from the host beyond their environment config: the
 * placeholders of the session's `environment_variable` credentials and the egress proxy that
 * swaps them for the values (main/vault/egress-proxy.ts). Never a secret value.
 */

/** How a hand reaches a port on this machine's loopback (undefined: it cannot). */
export type ReachHost = (port: number) => Promise<{ host: string; port: number } | undefined>;

/**
 * A private key held by the host's vault (its contents, never a path), offered to an SSH host
 * before the key files. `used` records the login in the session's ledger.
 */
export interface VaultSshKey {
  /** The credential's name and id, for messages. */
  name: string;
  privateKey: string;
  passphrase?: string;
  used(target: string): void;
}

/** The host's source of those variables (and of the session's SSH keys). */
export interface HandEnvSource {
  /** The session's `ssh_private_key` credentials that cover `host`, in scope order. */
  sshKeys?(sessionId: string, host: string): Promise<VaultSshKey[]>;
  envFor(sessionId: string, reach: ReachHost): Promise<Record<string, string>>;
}

/** A local hand reaches loopback unless sandboxed (the sandbox's own proxy never connects to loopback). */
export const localReach = (sandboxed: boolean): ReachHost => async (port) => (sandboxed ? undefined : { host: '127.0.0.1', port });
