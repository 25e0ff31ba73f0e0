import type { Vault } from './vault';

/** Where a key's value is kept (the same shape as hands/dial-in/key-vault.ts's, which the host wires this to). */
type Ref = { vaultId: string; credentialId: string };

/** The vault that keeps environment keys when the host has no default vault yet (as the hands panel does for SSH keys). */
const DEFAULT_VAULT_NAME = 'Machines';

/**
 * Environment keys (the credential of machines that dial in) as vault credentials of kind
 * `environment_key`: sealed like every value, never shown again, listed with name, kind, scope
 * (the environment) and last use, redacted wherever they would appear in a session's events,
 * and archived when the key is revoked. Each use a worker makes of one for a session is a
 * `vault.credential_used` event (purpose `dial_in`) in that session's log.
 */
export function environmentKeyVault(vault: Vault) {
  /** Uses without a session only move `last_used_at`: at most one write per key this often. */
  const TOUCH_EVERY_MS = 5000;
  const touched = new Map<string, number>();
  return {
    async store(o: { environmentId: string; keyId: string; name: string | null; key: string }): Promise<Ref> {
      const current = vault.defaultVaultId();
      const usable = current && !vault.getVault(current)?.archived_at ? current : undefined;
      const vaultId = usable ?? vault.createVault({ display_name: DEFAULT_VAULT_NAME, is_default: true }).id;
      const c = await vault.createCredential(vaultId, {
        display_name: o.name ?? `worker key ${o.keyId}`,
        metadata: { environment_id: o.environmentId, key_id: o.keyId },
        auth: { type: 'environment_key', environment_id: o.environmentId, key_id: o.keyId, key: o.key },
      });
      return { vaultId, credentialId: c.id };
    },
    isLive(ref: Ref): boolean {
      const c = vault.getCredential(ref.vaultId, ref.credentialId);
      const v = vault.getVault(ref.vaultId);
      return Boolean(c && !c.archived_at && v && !v.archived_at);
    },
    archive(ref: Ref): void {
      if (vault.getCredential(ref.vaultId, ref.credentialId)) vault.archiveCredential(ref.vaultId, ref.credentialId);
    },
    recordUse(ref: Ref, environmentId: string, sessionId: string | undefined, target: string): void {
      if (!sessionId) {
        const last = touched.get(ref.credentialId) ?? 0;
        if (Date.now() - last < TOUCH_EVERY_MS) return;
        touched.set(ref.credentialId, Date.now());
      }
      // Off the request's path: opening the credential waits for the vault's key.
      void vault
        .openCredential(ref.vaultId, ref.credentialId, { use: 'dial_in', environment_id: environmentId }, sessionId)
        .then((c) => c?.recordUse(target))
        .catch(() => {
          // a locked vault records nothing; the key was checked by its digest already
        });
    },
  };
}
