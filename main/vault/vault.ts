/**
 * The vault's credentials: vaults and credentials sealed at rest, usable only by the host, only
 * for the sessions whose `vault_ids` name their vault, and only within each credential's scope.
 * Values go in and never come out through the API; the host's proxies (model, git, MCP, SSH,
 * egress) get them through `resolve`, and every use is a `vault.credential_used` event in the
 * session's log. The key, the values held for redaction and the redaction itself are
 * vault-state.ts, which this class extends.
 */
import { monotonicFactory } from 'ulid';
import { seal } from './crypto';
import { allows, applyUpdate, KINDS_FOR, splitCreate, uniqueKeyOf, type AnySecret, type AuthCreate, type AuthUpdate, type CredentialPurpose, type PublicAuth, type SecretOf } from './kinds';
import { refreshedSecret } from './oauth';
import { DuplicateCredentialError, type CredentialRow, type VaultRow } from './store';
import { VaultState } from './vault-state';
import {
  aadOf,
  credentialInfo,
  placeholderOf,
  duplicate,
  envModelKey,
  VaultNotFoundError,
  VaultStateError,
  type CredentialInfo,
  type ModelKey,
  type ResolvedCredential,
  type VaultInfo,
} from './vault-types';

export {
  placeholderOf,
  VaultLockedError,
  VaultNotFoundError,
  VaultStateError,
  type CredentialInfo,
  type ModelKey,
  type ResolvedCredential,
  type VaultInfo,
  type VaultOptions,
} from './vault-types';
export type { LiveDeltaLike } from './live-redaction';

const nextUlid = monotonicFactory();
const newVaultId = () => `vlt_${nextUlid()}`;
const newCredentialId = () => `vcrd_${nextUlid()}`;
const DEFAULT_VAULT = 'default_vault_id';
/** An OAuth access token this close to expiry is refreshed before use. */
const REFRESH_MARGIN_MS = 60_000;

export class Vault extends VaultState {
  private readonly refreshing = new Map<string, Promise<void>>();

  // ---------------------------------------------------------------------------------------
  // Vaults

  createVault(input: { display_name: string; metadata?: Record<string, string>; is_default?: boolean }): VaultInfo {
    const id = newVaultId();
    this.store.transaction(() => {
      this.store.insertVault(id, { display_name: input.display_name, metadata: input.metadata ?? {} });
      if (input.is_default) this.store.setSetting(DEFAULT_VAULT, id);
    });
    return this.getVault(id)!;
  }

  getVault(id: string): VaultInfo | undefined {
    const row = this.store.vault(id);
    return row ? this.vaultInfo(row) : undefined;
  }

  listVaults(opts: { limit: number; page?: string | null; includeArchived?: boolean }): { data: VaultInfo[]; next_page: string | null } {
    const page = this.store.listVaults(opts);
    return { data: page.data.map((r) => this.vaultInfo(r)), next_page: page.next_page };
  }

  /**
   * Changes name, metadata or default-ness. An archived vault cannot change. `metadata` is the
   * whole new map, or a function of the stored one (applied inside the transaction, so two
   * patches at once both count).
   */
  updateVault(id: string, change: { display_name?: string; metadata?: MetadataChange; is_default?: boolean }): VaultInfo {
    this.store.transaction(() => {
      const row = this.mustVault(id);
      if (row.archived_at) throw new VaultStateError(`vault '${id}' is archived and cannot be updated`, 'vault_archived');
      this.store.updateVault(id, {
        display_name: change.display_name ?? row.record.display_name,
        metadata: nextMetadata(row.record.metadata, change.metadata),
      });
      if (change.is_default === true) this.store.setSetting(DEFAULT_VAULT, id);
      if (change.is_default === false && this.store.setting(DEFAULT_VAULT) === id) this.store.setSetting(DEFAULT_VAULT, null);
    });
    return this.getVault(id)!;
  }

  /** Archives a vault: its credentials are no longer used, and sessions cannot name it. */
  archiveVault(id: string): VaultInfo {
    this.store.transaction(() => {
      this.mustVault(id);
      this.store.archiveVault(id);
      if (this.store.setting(DEFAULT_VAULT) === id) this.store.setSetting(DEFAULT_VAULT, null);
    });
    return this.getVault(id)!;
  }

  /** Deletes a vault and its credentials, sealed values included. */
  deleteVault(id: string): void {
    const removed = this.store.transaction(() => {
      const creds = this.store.allCredentials().filter((c) => c.vault_id === id);
      if (!this.store.deleteVault(id)) throw new VaultNotFoundError('vault', id);
      if (this.store.setting(DEFAULT_VAULT) === id) this.store.setSetting(DEFAULT_VAULT, null);
      return creds;
    });
    for (const c of removed) this.values.delete(c.id);
    this.version++;
  }

  defaultVaultId(): string | undefined {
    return this.store.setting(DEFAULT_VAULT);
  }

  // ---------------------------------------------------------------------------------------
  // Credentials

  async createCredential(vaultId: string, input: { display_name?: string | null; metadata?: Record<string, string>; auth: AuthCreate }): Promise<CredentialInfo> {
    const key = await this.needKey();
    const { auth, secret } = splitCreate(input.auth);
    const id = newCredentialId();
    this.store.transaction(() => {
      const vault = this.mustVault(vaultId);
      if (vault.archived_at) throw new VaultStateError(`vault '${vaultId}' is archived; credentials cannot be added to it`, 'vault_archived');
      const unique = uniqueKeyOf(auth);
      try {
        this.store.insertCredential({
          id,
          vault_id: vaultId,
          kind: auth.type,
          unique_key: unique ?? null,
          record: { display_name: input.display_name ?? null, metadata: input.metadata ?? {}, auth },
          secret: seal(key, JSON.stringify(secret), aadOf(vaultId, id)),
        });
      } catch (err) {
        if (err instanceof DuplicateCredentialError) throw duplicate(vaultId, auth);
        throw err;
      }
    });
    const row = this.store.credential(vaultId, id)!;
    this.remember(row, secret);
    return credentialInfo(row);
  }

  getCredential(vaultId: string, id: string): CredentialInfo | undefined {
    const row = this.store.credential(vaultId, id);
    return row ? credentialInfo(row) : undefined;
  }

  listCredentials(vaultId: string, opts: { limit: number; page?: string | null; includeArchived?: boolean }): { data: CredentialInfo[]; next_page: string | null } {
    this.mustVault(vaultId);
    const page = this.store.listCredentials(vaultId, opts);
    return { data: page.data.map(credentialInfo), next_page: page.next_page };
  }

  /**
   * Changes name, metadata (the whole new map, or a function of the stored one applied inside the
   * transaction) and `auth` (new values re-sealed; the type cannot change).
   */
  async updateCredential(
    vaultId: string,
    id: string,
    change: { display_name?: string | null; metadata?: MetadataChange; auth?: AuthUpdate },
  ): Promise<CredentialInfo> {
    const key = await this.needKey();
    let newSecret: AnySecret | undefined;
    this.store.transaction(() => {
      const row = this.mustCredential(vaultId, id);
      if (row.archived_at) throw new VaultStateError(`credential '${id}' is archived and cannot be updated`, 'credential_archived');
      let auth = row.record.auth as PublicAuth;
      let sealed = row.secret;
      if (change.auth) {
        const next = applyUpdate(auth, this.openSecret(row), change.auth);
        auth = next.auth;
        newSecret = next.secret;
        sealed = seal(key, JSON.stringify(next.secret), aadOf(vaultId, id));
      }
      this.store.updateCredential(
        id,
        {
          display_name: change.display_name !== undefined ? change.display_name : row.record.display_name,
          metadata: nextMetadata(row.record.metadata, change.metadata),
          auth,
        },
        sealed,
      );
    });
    const row = this.store.credential(vaultId, id)!;
    this.remember(row, newSecret);
    return credentialInfo(row);
  }

  archiveCredential(vaultId: string, id: string): CredentialInfo {
    this.mustCredential(vaultId, id);
    this.store.archiveCredential(id);
    return credentialInfo(this.store.credential(vaultId, id)!);
  }

  deleteCredential(vaultId: string, id: string): void {
    this.mustVault(vaultId);
    if (!this.store.deleteCredential(vaultId, id)) throw new VaultNotFoundError('credential', id);
    this.values.delete(id);
    this.version++;
  }

  // ---------------------------------------------------------------------------------------
  // Use: what the host's proxies call

  /** The vaults a session may use, in the order it named them (missing or archived ones left out). */
  sessionVaults(sessionId: string): string[] {
    const ids = this.opts.log.findSession(sessionId)?.record.vault_ids;
    if (!Array.isArray(ids)) return [];
    return ids.filter((id): id is string => typeof id === 'string' && Boolean(this.store.vault(id)) && !this.store.vault(id)!.archived_at);
  }

  /**
   * The credential a session may use for a purpose: the first live credential of the right kind
   * whose scope allows it, searching the session's vaults in the order it named them. Nothing
   * outside those vaults is ever returned (the model key's default vault is `modelKey`'s
   * business). An `mcp_oauth` token about to expire is refreshed first. The use is not recorded
   * until the caller calls `recordUse` (once the request is really sent).
   */
  async resolve(sessionId: string, purpose: CredentialPurpose): Promise<ResolvedCredential | undefined> {
    return (await this.resolveAll(sessionId, purpose, 1))[0];
  }

  /** Every credential a session may use for a purpose (the egress proxy substitutes several). */
  async resolveAll(sessionId: string, purpose: CredentialPurpose, limit = Infinity): Promise<ResolvedCredential[]> {
    await this.needKey();
    const out: ResolvedCredential[] = [];
    for (const vaultId of this.sessionVaults(sessionId)) {
      for (const row of this.store.usableCredentials(vaultId, KINDS_FOR[purpose.use])) {
        if (!allows(row.record.auth as PublicAuth, purpose)) continue;
        out.push(await this.resolved(sessionId, row, purpose));
        if (out.length >= limit) return out;
      }
    }
    return out;
  }

  /**
   * The model key for a session's requests: the first `model_api_key` in the session's vaults,
   * else the one in the host's default vault, else `ANTHROPIC_API_KEY` (or
   * `ANTHROPIC_AUTH_TOKEN`, sent as a bearer token) from the host's environment. Undefined: none.
   */
  async modelKey(sessionId: string): Promise<ModelKey | undefined> {
    const own = (await this.resolve(sessionId, { use: 'model' })) as ResolvedCredential<'model_api_key'> | undefined;
    if (own) return { value: own.secret.api_key, header: own.credential.auth.header as ModelKey['header'], source: 'session_vault', credential: own };
    const fromDefault = await this.defaultModelCredential(sessionId);
    if (fromDefault) return { value: fromDefault.secret.api_key, header: fromDefault.credential.auth.header as ModelKey['header'], source: 'default_vault', credential: fromDefault };
    return envModelKey(this.env);
  }

  /** Which model key sessions that name no vault with one get (for `serve`'s start-up message). */
  async defaultModelKeySource(): Promise<string> {
    const cred = await this.defaultModelCredential(undefined).catch(() => undefined);
    if (cred) return `the default vault's model_api_key credential ${cred.credential.display_name ? `'${cred.credential.display_name}' ` : ''}(${cred.credential.id})`;
    const env = envModelKey(this.env);
    if (env) return `${env.header === 'x-api-key' ? 'ANTHROPIC_API_KEY' : 'ANTHROPIC_AUTH_TOKEN'} from the environment (a first-run fallback: store it as a model_api_key credential in the default vault)`;
    return 'none (set ANTHROPIC_API_KEY, or add a model_api_key credential to the default vault or a session\'s vault)';
  }

  private async defaultModelCredential(sessionId: string | undefined): Promise<ResolvedCredential<'model_api_key'> | undefined> {
    await this.needKey();
    const id = this.defaultVaultId();
    const vault = id ? this.store.vault(id) : undefined;
    if (!vault || vault.archived_at) return undefined;
    const row = this.store.usableCredentials(vault.id, ['model_api_key'])[0];
    return row ? ((await this.resolved(sessionId, row, { use: 'model' })) as ResolvedCredential<'model_api_key'>) : undefined;
  }

  /**
   * The placeholders a hand sees instead of the session's `environment_variable` values
   * (name → placeholder); the egress proxy swaps them for the values on allowed hosts.
   */
  async environmentPlaceholders(sessionId: string): Promise<Record<string, string>> {
    await this.needKey();
    const out: Record<string, string> = {};
    for (const vaultId of this.sessionVaults(sessionId)) {
      for (const row of this.store.usableCredentials(vaultId, ['environment_variable'])) {
        const name = String(row.record.auth.secret_name);
        if (!(name in out)) out[name] = placeholderOf(row.id);
      }
    }
    return out;
  }

  /** Exchanges an `mcp_oauth` credential's refresh token for a new access token, and keeps it. */
  async refreshOAuth(vaultId: string, id: string): Promise<CredentialInfo> {
    const key = await this.needKey();
    const pending = this.refreshing.get(id);
    if (pending) {
      await pending;
      return credentialInfo(this.mustCredential(vaultId, id));
    }
    const run = (async () => {
      const row = this.mustCredential(vaultId, id);
      const next = await refreshedSecret(row, this.openSecret(row) as SecretOf<'mcp_oauth'>);
      this.store.transaction(() => {
        const current = this.mustCredential(vaultId, id);
        this.store.updateCredential(id, { ...current.record, auth: { ...current.record.auth, expires_at: next.expires_at } }, seal(key, JSON.stringify(next.secret), aadOf(vaultId, id)));
      });
      this.remember(this.store.credential(vaultId, id)!, next.secret);
    })();
    this.refreshing.set(id, run);
    try {
      await run;
    } finally {
      this.refreshing.delete(id);
    }
    return credentialInfo(this.mustCredential(vaultId, id));
  }

  private async resolved(sessionId: string | undefined, row: CredentialRow, purpose: CredentialPurpose): Promise<ResolvedCredential> {
    let current = row;
    const auth = row.record.auth as Record<string, any>;
    if (auth.type === 'mcp_oauth' && auth.refresh && auth.expires_at && Date.parse(auth.expires_at) - Date.now() < REFRESH_MARGIN_MS) {
      try {
        await this.refreshOAuth(row.vault_id, row.id);
        current = this.store.credential(row.vault_id, row.id) ?? row;
      } catch (err) {
        // The stale token is still returned: the server's 401 is then the error the caller reports.
        console.warn(`corral: vault: refreshing credential ${row.id} failed: ${(err as Error).message}`);
      }
    }
    return {
      credential: credentialInfo(current) as ResolvedCredential['credential'],
      secret: this.openSecret(current) as never,
      recordUse: (target) => this.recordUse(sessionId, current, purpose, target),
    };
  }

  private recordUse(sessionId: string | undefined, row: CredentialRow, purpose: CredentialPurpose, target: string): void {
    const at = new Date().toISOString();
    this.store.touchCredential(row.id, at);
    if (!sessionId) return;
    try {
      this.opts.log.emitEvent(sessionId, {
        type: 'vault.credential_used',
        credential_id: row.id,
        vault_id: row.vault_id,
        kind: row.kind,
        purpose: purpose.use,
        target: this.redactor.redact(target),
      });
    } catch (err) {
      console.warn(`corral: vault: could not record a use of ${row.id} in ${sessionId}: ${(err as Error).message}`);
    }
  }

  // ---------------------------------------------------------------------------------------

  /** A live credential by id, opened for `purpose`; its kind and scope are the caller's to check (ssh-keys.ts). */
  async openCredential(vaultId: string, id: string, purpose: CredentialPurpose, sessionId?: string): Promise<ResolvedCredential | undefined> { const row = (await this.needKey(), this.store.credential(vaultId, id)); return row && !row.archived_at ? this.resolved(sessionId, row, purpose) : undefined; }

  private vaultInfo(row: VaultRow): VaultInfo {
    return {
      id: row.id,
      display_name: row.record.display_name,
      metadata: row.record.metadata ?? {},
      created_at: row.created_at,
      updated_at: row.updated_at,
      archived_at: row.archived_at,
      is_default: this.store.setting(DEFAULT_VAULT) === row.id,
    };
  }

  private mustVault(id: string): VaultRow {
    const row = this.store.vault(id);
    if (!row) throw new VaultNotFoundError('vault', id);
    return row;
  }

  private mustCredential(vaultId: string, id: string): CredentialRow {
    this.mustVault(vaultId);
    const row = this.store.credential(vaultId, id);
    if (!row) throw new VaultNotFoundError('credential', id);
    return row;
  }
}

/** New metadata for an update: the whole map, or a function of the stored one (a patch). */
export type MetadataChange = Record<string, string> | ((current: Record<string, string>) => Record<string, string>);

function nextMetadata(current: Record<string, string>, change: MetadataChange | undefined): Record<string, string> {
  if (change === undefined) return current;
  return typeof change === 'function' ? change(current) : change;
}
