/**
 * The vault's SSH keys as an SSH hand offers them: in memory only (never a file), each use
 * recorded as the vault records any use (`vault.credential_used` in the session's log).
 */
import type { InlineKey } from '../ssh/keys';
import type { SessionSshKeys } from '../ssh';
import type { Vault } from '../../vault/vault';
import { sshKeysFor } from '../../vault/ssh-keys';

/** The keys a session's SSH hand may offer to a host, from the session's vaults and the default vault. */
export function vaultSshKeys(vault: Vault): SessionSshKeys {
  return async (sessionId, target) => {
    const found = await sshKeysFor(vault, sessionId, target.host);
    return found.map((c): InlineKey => {
      c.recordUse(`ssh ${target.user}@${target.host}:${target.port}`);
      return { label: `vault credential ${c.credential.id}`, privateKey: c.secret.private_key, passphrase: c.secret.passphrase };
    });
  };
}
