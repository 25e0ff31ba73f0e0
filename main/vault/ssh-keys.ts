/**
 * SSH keys for a host: those of a session's vaults whose scope allows it, then the host's default
 * vault's (where keys dropped on the window go, as the model key falls back to it) — there only
 * keys whose hosts name this one, so a dropped key scoped to "any host" is never offered
 * everywhere. With no session (the attach form's connection test), the default vault's, or the
 * one credential named.
 */
import { hostMatches } from './kinds';
import type { ResolvedCredential, Vault } from './vault';

type SshKey = ResolvedCredential<'ssh_private_key'>;

export async function sshKeysFor(vault: Vault, sessionId: string | undefined, host: string, only?: { vaultId: string; id: string }): Promise<SshKey[]> {
  const purpose = { use: 'ssh' as const, host };
  if (only) {
    const c = await vault.openCredential(only.vaultId, only.id, purpose, sessionId);
    return c && c.credential.auth.type === 'ssh_private_key' ? [c as SshKey] : [];
  }
  const out = sessionId ? ((await vault.resolveAll(sessionId, purpose)) as SshKey[]) : [];
  const fallback = vault.defaultVaultId();
  if (!fallback || (sessionId && vault.sessionVaults(sessionId).includes(fallback))) return out;
  for (const info of vault.listCredentials(fallback, { limit: 1000 }).data) {
    const hosts = (info.auth.hosts as string[] | undefined) ?? [];
    if (info.auth.type !== 'ssh_private_key' || !hosts.some((h) => hostMatches(h, host))) continue;
    const c = await vault.openCredential(fallback, info.id, purpose, sessionId);
    if (c) out.push(c as SshKey);
  }
  return out;
}
