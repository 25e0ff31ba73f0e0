import type { Host } from '../../../host';
import { CredentialInputError } from '../../../vault/kinds';
import { VaultLockedError, VaultNotFoundError, VaultStateError, type CredentialInfo, type VaultInfo } from '../../../vault/vault';
import { applyMetadataPatch } from '../../http/schemas/common';
import type { UiCredential, UiVault } from '../contract';
import { UiServiceError, type HostCalls } from '../service';

type VaultCalls = Pick<HostCalls, 'listVaults' | 'createVault' | 'createCredential' | 'updateCredential' | 'archiveCredential' | 'deleteCredential'>;

/** Only the fields the panel shows: a credential's info never carries a value, and this copies no more than named. */
const credential = (c: CredentialInfo): UiCredential => ({
  id: c.id,
  vault_id: c.vault_id,
  display_name: c.display_name,
  auth: { ...c.auth } as UiCredential['auth'],
  created_at: c.created_at,
  updated_at: c.updated_at,
  archived_at: c.archived_at,
  last_used_at: c.last_used_at,
});

const vaultOf = (v: VaultInfo, credentials: CredentialInfo[]): UiVault => ({
  id: v.id,
  display_name: v.display_name,
  is_default: v.is_default,
  created_at: v.created_at,
  archived_at: v.archived_at,
  credentials: credentials.map(credential),
});

/** The vault's refusals as the window's error kinds (messages never quote a value). */
export async function vaultCall<T>(fn: () => T | Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof VaultNotFoundError) throw new UiServiceError({ kind: 'not_found', message: err.message });
    if (err instanceof VaultStateError || err instanceof CredentialInputError) throw new UiServiceError({ kind: 'invalid_input', message: err.message });
    if (err instanceof VaultLockedError) throw new UiServiceError({ kind: 'internal', message: err.message });
    throw err;
  }
}

/** The vault panel's calls, as `/v1/vaults` does them: values go in (create, rotate) and never come back. */
export function vaultCalls(host: Pick<Host, 'vault'>): VaultCalls {
  const { vault } = host;
  const credentialsOf = (vaultId: string, includeArchived: boolean) => vault.listCredentials(vaultId, { limit: 1000, includeArchived }).data;
  return {
    listVaults: (i) =>
      vaultCall(() =>
        vault.listVaults({ limit: 1000, includeArchived: i.includeArchived ?? false }).data.map((v) => vaultOf(v, credentialsOf(v.id, i.includeArchived ?? false))),
      ),
    createVault: (body) => vaultCall(() => vaultOf(vault.createVault(body), [])),
    createCredential: ({ vaultId, credential: body }) => vaultCall(async () => credential(await vault.createCredential(vaultId, body))),
    updateCredential: ({ vaultId, credentialId, update }) =>
      vaultCall(async () => {
        const current = vault.getCredential(vaultId, credentialId);
        if (!current) throw new VaultNotFoundError('credential', credentialId);
        return credential(
          await vault.updateCredential(vaultId, credentialId, {
            display_name: update.display_name,
            metadata: update.metadata === undefined ? undefined : (stored) => applyMetadataPatch(stored, update.metadata),
            auth: update.auth,
          }),
        );
      }),
    archiveCredential: ({ vaultId, credentialId }) => vaultCall(() => credential(vault.archiveCredential(vaultId, credentialId))),
    deleteCredential: ({ vaultId, credentialId }) =>
      vaultCall(() => {
        vault.deleteCredential(vaultId, credentialId);
        return { id: credentialId, deleted: true as const };
      }),
  };
}
