import type { Database } from 'better-sqlite3';
import { listPage, type Page } from '../db/pagination';

/** A vault as stored (its record: display name and metadata). */
export interface VaultRow {
  id: string;
  created_at: string;
  updated_at: string;
  archived_at: string | null;
  record: { display_name: string; metadata: Record<string, string> };
}

/** A credential as stored: the public record, and the sealed secret. */
export interface CredentialRow {
  id: string;
  vault_id: string;
  kind: string;
  created_at: string;
  updated_at: string;
  archived_at: string | null;
  last_used_at: string | null;
  unique_key: string | null;
  record: { display_name: string | null; metadata: Record<string, string>; auth: Record<string, unknown> & { type: string } };
  secret: Buffer;
}

export interface KeyringRow {
  mode: string;
  kdf: string | null;
  salt: Buffer | null;
  check_value: Buffer;
}

/** A unique key (MCP server URL, variable name) already used by a live credential of the vault. */
export class DuplicateCredentialError extends Error {
  override readonly name = 'DuplicateCredentialError';
}

type Raw<T> = Omit<T, 'record'> & { record: string };
const parse = <T extends { record: unknown }>(row: Raw<T> | undefined): T | undefined =>
  row ? ({ ...row, record: JSON.parse(row.record) } as T) : undefined;

/** The vault's tables. SQL only; sealing, checks and meaning are in vault.ts. */
export class VaultStore {
  /**
   * Bumped by every write that can change which credential a session resolves to (vaults,
   * credentials, settings, the keyring; not `touchCredential`): caches of resolutions compare it.
   */
  private writes = 0;

  /** The write counter (see `writes`). */
  get generation(): number {
    return this.writes;
  }

  constructor(private readonly db: Database) {}

  transaction<T>(fn: () => T): T {
    return this.db.transaction(fn).immediate();
  }

  // --- keyring and settings

  keyring(): KeyringRow | undefined {
    return this.db.prepare('SELECT mode, kdf, salt, check_value FROM vault_keyring WHERE id = 1').get() as KeyringRow | undefined;
  }

  setKeyring(k: KeyringRow): void {
    this.writes++;
    this.db
      .prepare(
        `INSERT INTO vault_keyring (id, mode, kdf, salt, check_value, created_at) VALUES (1, ?, ?, ?, ?, ?)
         ON CONFLICT(id) DO UPDATE SET mode = excluded.mode, kdf = excluded.kdf, salt = excluded.salt, check_value = excluded.check_value, created_at = excluded.created_at`,
      )
      .run(k.mode, k.kdf, k.salt, k.check_value, new Date().toISOString());
  }

  setting(name: string): string | undefined {
    return (this.db.prepare('SELECT value FROM vault_settings WHERE name = ?').get(name) as { value: string } | undefined)?.value;
  }

  setSetting(name: string, value: string | null): void {
    this.writes++;
    if (value === null) this.db.prepare('DELETE FROM vault_settings WHERE name = ?').run(name);
    else this.db.prepare('INSERT INTO vault_settings (name, value) VALUES (?, ?) ON CONFLICT(name) DO UPDATE SET value = excluded.value').run(name, value);
  }

  // --- vaults

  insertVault(id: string, record: VaultRow['record']): VaultRow {
    this.writes++;
    const now = new Date().toISOString();
    this.db.prepare('INSERT INTO vaults (id, created_at, updated_at, record) VALUES (?, ?, ?, ?)').run(id, now, now, JSON.stringify(record));
    return this.vault(id)!;
  }

  vault(id: string): VaultRow | undefined {
    return parse<VaultRow>(this.db.prepare('SELECT id, created_at, updated_at, archived_at, record FROM vaults WHERE id = ?').get(id) as Raw<VaultRow> | undefined);
  }

  updateVault(id: string, record: VaultRow['record']): void {
    this.writes++;
    this.db.prepare('UPDATE vaults SET record = ?, updated_at = ? WHERE id = ?').run(JSON.stringify(record), new Date().toISOString(), id);
  }

  archiveVault(id: string): void {
    this.writes++;
    const now = new Date().toISOString();
    this.db.prepare('UPDATE vaults SET archived_at = coalesce(archived_at, ?), updated_at = ? WHERE id = ?').run(now, now, id);
  }

  /** Removes a vault and its credentials (sealed values included). */
  deleteVault(id: string): boolean {
    this.writes++;
    this.db.prepare('DELETE FROM vault_credentials WHERE vault_id = ?').run(id);
    return this.db.prepare('DELETE FROM vaults WHERE id = ?').run(id).changes > 0;
  }

  listVaults(opts: { limit: number; page?: string | null; includeArchived?: boolean }): Page<VaultRow> {
    const where = opts.includeArchived ? [] : ['archived_at IS NULL'];
    const page = listPage<Raw<VaultRow>>(this.db, { table: 'vaults', where, params: [], limit: opts.limit, order: 'desc', page: opts.page });
    return { ...page, data: page.data.map((r) => parse<VaultRow>(r)!) };
  }

  // --- credentials

  insertCredential(row: Omit<CredentialRow, 'created_at' | 'updated_at' | 'archived_at' | 'last_used_at'>): void {
    this.writes++;
    const now = new Date().toISOString();
    try {
      this.db
        .prepare(
          'INSERT INTO vault_credentials (id, vault_id, kind, created_at, updated_at, unique_key, record, secret) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
        )
        .run(row.id, row.vault_id, row.kind, now, now, row.unique_key, JSON.stringify(row.record), row.secret);
    } catch (err) {
      if ((err as { code?: string }).code === 'SQLITE_CONSTRAINT_UNIQUE') throw new DuplicateCredentialError(String(row.unique_key));
      throw err;
    }
  }

  credential(vaultId: string, id: string): CredentialRow | undefined {
    return parse<CredentialRow>(this.db.prepare('SELECT * FROM vault_credentials WHERE id = ? AND vault_id = ?').get(id, vaultId) as Raw<CredentialRow> | undefined);
  }

  updateCredential(id: string, record: CredentialRow['record'], secret: Buffer): void {
    this.writes++;
    this.db.prepare('UPDATE vault_credentials SET record = ?, secret = ?, updated_at = ? WHERE id = ?').run(JSON.stringify(record), secret, new Date().toISOString(), id);
  }

  archiveCredential(id: string): void {
    this.writes++;
    const now = new Date().toISOString();
    this.db.prepare('UPDATE vault_credentials SET archived_at = coalesce(archived_at, ?), updated_at = ? WHERE id = ?').run(now, now, id);
  }

  deleteCredential(vaultId: string, id: string): boolean {
    this.writes++;
    return this.db.prepare('DELETE FROM vault_credentials WHERE id = ? AND vault_id = ?').run(id, vaultId).changes > 0;
  }

  touchCredential(id: string, at: string): void {
    this.db.prepare('UPDATE vault_credentials SET last_used_at = ? WHERE id = ?').run(at, id);
  }

  listCredentials(vaultId: string, opts: { limit: number; page?: string | null; includeArchived?: boolean }): Page<CredentialRow> {
    const where = ['vault_id = ?', ...(opts.includeArchived ? [] : ['archived_at IS NULL'])];
    const page = listPage<Raw<CredentialRow>>(this.db, { table: 'vault_credentials', where, params: [vaultId], limit: opts.limit, order: 'desc', page: opts.page });
    return { ...page, data: page.data.map((r) => parse<CredentialRow>(r)!) };
  }

  /** Live credentials of some kinds in a vault, oldest first (the order uses pick from). */
  usableCredentials(vaultId: string, kinds: readonly string[]): CredentialRow[] {
    if (kinds.length === 0) return [];
    const rows = this.db
      .prepare(
        `SELECT * FROM vault_credentials WHERE vault_id = ? AND archived_at IS NULL AND kind IN (${kinds.map(() => '?').join(', ')}) ORDER BY created_at, id`,
      )
      .all(vaultId, ...kinds) as Raw<CredentialRow>[];
    return rows.map((r) => parse<CredentialRow>(r)!);
  }

  /** Every credential (archived ones too): what redaction must know about. */
  allCredentials(): CredentialRow[] {
    return (this.db.prepare('SELECT * FROM vault_credentials ORDER BY created_at, id').all() as Raw<CredentialRow>[]).map((r) => parse<CredentialRow>(r)!);
  }

  countCredentials(): number {
    return (this.db.prepare('SELECT count(*) AS n FROM vault_credentials').get() as { n: number }).n;
  }
}
