/**
 * The vault's public shapes (what the API shows, what a use gets), its errors, and the small
 * helpers that turn stored rows into them.
 */
import type { Database } from 'better-sqlite3';
import type { SessionLog } from '../session/store';
import type { CredentialKind, PublicAuth, SecretOf } from './kinds';
import type { VaultKeyWrapper } from './keys';
import type { SecretEntry } from './redact';
import type { CredentialRow } from './store';

/** A vault as the API shows it. */
export interface VaultInfo {
  id: string;
  display_name: string;
  metadata: Record<string, string>;
  created_at: string;
  updated_at: string;
  archived_at: string | null;
  /** Corral: the host's default vault (its model key serves sessions that name none). */
  is_default: boolean;
}

/** A credential as the API shows it: never a value. */
export interface CredentialInfo {
  id: string;
  vault_id: string;
  display_name: string | null;
  metadata: Record<string, string>;
  auth: PublicAuth;
  created_at: string;
  updated_at: string;
  archived_at: string | null;
  /** Corral: when a session last used it (a ledger event records each use). */
  last_used_at: string | null;
}

/** A credential picked for one use, with its value. Host-side only: never send it anywhere but the target. */
export interface ResolvedCredential<K extends CredentialKind = CredentialKind> {
  credential: CredentialInfo & { auth: PublicAuth & { type: K } };
  secret: SecretOf<K>;
  /** Records the use: a `vault.credential_used` event in the session's log, and `last_used_at`. */
  recordUse(target: string): void;
}

/** The model key a session's requests get, and where it came from. */
export interface ModelKey {
  value: string;
  /** The header the upstream expects it in. */
  header: 'x-api-key' | 'authorization';
  source: 'session_vault' | 'default_vault' | 'env';
  /** The credential (vault sources only). */
  credential?: ResolvedCredential<'model_api_key'>;
}

export class VaultNotFoundError extends Error {
  override readonly name = 'VaultNotFoundError';
  constructor(
    readonly what: 'vault' | 'credential',
    readonly id: string,
  ) {
    super(`${what} '${id}' was not found`);
  }
}

/** An operation the vault's state does not allow (an archived vault or credential, a duplicate). */
export class VaultStateError extends Error {
  override readonly name = 'VaultStateError';
  constructor(
    message: string,
    readonly code: string,
  ) {
    super(message);
  }
}

/** The key could not be had: values cannot be sealed or opened. */
export class VaultLockedError extends Error {
  override readonly name = 'VaultLockedError';
}

export interface VaultOptions {
  db: Database;
  log: SessionLog;
  dataDir: string;
  /** Passphrase mode when set (else the key file). */
  passphrase?: string;
  /** The desktop app's OS-keychain wrapping of the key file. */
  keyWrapper?: VaultKeyWrapper;
  /** Where the model-key fallback (`ANTHROPIC_API_KEY`, `ANTHROPIC_AUTH_TOKEN`) is read; default process.env, read at each use. */
  env?: NodeJS.ProcessEnv;
}

/** Sealed values are bound to their vault and credential: a value moved to another row does not open. */
export const aadOf = (vaultId: string, credentialId: string) => `corral:vault_credential:${vaultId}:${credentialId}`;

export const labelOf = (row: CredentialRow) => `credential ${row.record.display_name || row.id}`;

/** What a hand sees in place of an `environment_variable` value. */
export const placeholderOf = (credentialId: string) => `corral_vault_placeholder_${credentialId}`;

export function credentialInfo(row: CredentialRow): CredentialInfo {
  return {
    id: row.id,
    vault_id: row.vault_id,
    display_name: row.record.display_name,
    metadata: row.record.metadata ?? {},
    auth: row.record.auth as PublicAuth,
    created_at: row.created_at,
    updated_at: row.updated_at,
    archived_at: row.archived_at,
    last_used_at: row.last_used_at,
  };
}

export function duplicate(vaultId: string, auth: PublicAuth): VaultStateError {
  const a = auth as Record<string, unknown>;
  return auth.type === 'environment_variable'
    ? new VaultStateError(`vault '${vaultId}' already has a credential for the variable '${String(a.secret_name)}'`, 'credential_conflict')
    : new VaultStateError(`vault '${vaultId}' already has a credential for the MCP server ${String(a.mcp_server_url)}`, 'credential_conflict');
}

export function envModelKey(env: NodeJS.ProcessEnv): ModelKey | undefined {
  if (env.ANTHROPIC_API_KEY) return { value: env.ANTHROPIC_API_KEY, header: 'x-api-key', source: 'env' };
  if (env.ANTHROPIC_AUTH_TOKEN) return { value: env.ANTHROPIC_AUTH_TOKEN, header: 'authorization', source: 'env' };
  return undefined;
}

export function hostSecrets(env: NodeJS.ProcessEnv): SecretEntry[] {
  const out: SecretEntry[] = [];
  for (const name of ['ANTHROPIC_API_KEY', 'ANTHROPIC_AUTH_TOKEN'] as const) {
    const v = env[name];
    if (v && v.length >= 8) out.push({ label: name, values: [v] });
  }
  return out;
}
