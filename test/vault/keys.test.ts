import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { openDatabase } from '../../main/session/db';
import { SessionLog } from '../../main/session/store';
import type { VaultKeyWrapper } from '../../main/vault/keys';
import { Vault } from '../../main/vault/vault';
import { tmpDir } from '../helpers/tmp';

const opened: { vault: Vault; log: SessionLog }[] = [];
afterEach(() => {
  for (const o of opened.splice(0)) {
    o.vault.close();
    o.log.close();
  }
});

function openVault(dataDir: string, opts: { passphrase?: string; keyWrapper?: VaultKeyWrapper } = {}): Vault {
  const db = openDatabase({ file: path.join(dataDir, 'corral.sqlite') });
  const log = new SessionLog(db);
  const vault = new Vault({ db, log, dataDir, env: {}, ...opts });
  opened.push({ vault, log });
  return vault;
}
function closeAll() {
  for (const o of opened.splice(0)) {
    o.vault.close();
    o.log.close();
  }
}

const TOKEN = 'tok_' + crypto.randomBytes(12).toString('hex');

async function plant(vault: Vault): Promise<{ vaultId: string; id: string }> {
  await vault.ready;
  const v = vault.createVault({ display_name: 'v' });
  const c = await vault.createCredential(v.id, { auth: { type: 'static_bearer', mcp_server_url: 'https://mcp.example.com/mcp', token: TOKEN } });
  return { vaultId: v.id, id: c.id };
}

/** A session that names the vault, and the token it resolves to. */
async function tokenFor(vault: Vault, dataDirVaultId: string, log = opened.at(-1)!.log): Promise<string | undefined> {
  const { session } = log.createSession({ record: { vault_ids: [dataDirVaultId] } });
  const got = await vault.resolve(session.id, { use: 'mcp', server_url: 'https://mcp.example.com/mcp' });
  return (got?.secret as { token?: string } | undefined)?.token;
}

/** A stand-in for Electron's safeStorage (the shell's real one is typechecked only). */
function fakeKeychain(available = true): VaultKeyWrapper & { wrapped: number } {
  const k = crypto.randomBytes(32);
  const w = {
    name: 'test keychain',
    wrapped: 0,
    available: async () => available,
    wrap: async (text: string) => {
      w.wrapped++;
      const iv = crypto.randomBytes(16);
      const c = crypto.createCipheriv('aes-256-cbc', k, iv);
      return Buffer.concat([iv, c.update(text, 'utf8'), c.final()]);
    },
    unwrap: async (buf: Buffer) => {
      const d = crypto.createDecipheriv('aes-256-cbc', k, buf.subarray(0, 16));
      return Buffer.concat([d.update(buf.subarray(16)), d.final()]).toString('utf8');
    },
  };
  return w;
}

describe('vault key: key file', () => {
  it('is made at first start with mode 0600, and opens the vault again after a restart', async () => {
    const dir = tmpDir();
    const vault = openVault(dir);
    const { vaultId } = await plant(vault);
    const file = path.join(dir, 'vault.key');
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect(Buffer.from(fs.readFileSync(file, 'utf8').trim(), 'base64')).toHaveLength(32);
    expect(vault.keySource).toEqual({ mode: 'key_file', description: `the key file ${file}` });
    closeAll();
    const again = openVault(dir);
    await again.ready;
    expect(await tokenFor(again, vaultId)).toBe(TOKEN);
  });

  it('a key file others can read is made private again', async () => {
    const dir = tmpDir();
    await plant(openVault(dir));
    closeAll();
    fs.chmodSync(path.join(dir, 'vault.key'), 0o644);
    await openVault(dir).ready;
    expect(fs.statSync(path.join(dir, 'vault.key')).mode & 0o777).toBe(0o600);
  });

  it('a missing or replaced key file is a clear error while sealed values exist', async () => {
    const dir = tmpDir();
    await plant(openVault(dir));
    closeAll();
    const file = path.join(dir, 'vault.key');
    const original = fs.readFileSync(file);
    fs.rmSync(file);
    await expect(openVault(dir).ready).rejects.toThrow(/vault\.key is missing: the 1 credential\(s\) sealed with it cannot be opened/);
    closeAll();
    fs.writeFileSync(file, crypto.randomBytes(32).toString('base64'), { mode: 0o600 });
    await expect(openVault(dir).ready).rejects.toThrow(/does not open the vault/);
    closeAll();
    fs.writeFileSync(file, original, { mode: 0o600 });
    await openVault(dir).ready;
  });

  it('the desktop app wraps a new key file with the OS keychain; a process without it is told why it cannot open it', async () => {
    const dir = tmpDir();
    const keychain = fakeKeychain();
    const vault = openVault(dir, { keyWrapper: keychain });
    const { vaultId } = await plant(vault);
    expect(keychain.wrapped).toBe(1);
    const text = fs.readFileSync(path.join(dir, 'vault.key'), 'utf8');
    expect(text.startsWith('safestorage:')).toBe(true);
    expect(vault.keySource!.description).toMatch(/wrapped by test keychain/);
    closeAll();
    await expect(openVault(dir).ready).rejects.toThrow(/wrapped by the desktop app's OS keychain/);
    closeAll();
    const again = openVault(dir, { keyWrapper: keychain });
    await again.ready;
    expect(await tokenFor(again, vaultId)).toBe(TOKEN);
  });

  it('no wrapping where the keychain is not real protection (safeStorage basic_text)', async () => {
    const dir = tmpDir();
    await plant(openVault(dir, { keyWrapper: fakeKeychain(false) }));
    expect(fs.readFileSync(path.join(dir, 'vault.key'), 'utf8').startsWith('safestorage:')).toBe(false);
  });
});

describe('vault key: passphrase', () => {
  it('opens with the right passphrase, and a wrong one is a clear error, not garbage', async () => {
    const dir = tmpDir();
    const vault = openVault(dir, { passphrase: 'correct horse battery staple' });
    const { vaultId } = await plant(vault);
    expect(vault.keySource!.mode).toBe('passphrase');
    expect(fs.existsSync(path.join(dir, 'vault.key'))).toBe(false);
    closeAll();
    await expect(openVault(dir, { passphrase: 'correct horse battery stable' }).ready).rejects.toThrow(/CORRAL_VAULT_PASSPHRASE does not open the vault .*wrong passphrase/);
    closeAll();
    await expect(openVault(dir).ready).rejects.toThrow(/locked with a passphrase: set CORRAL_VAULT_PASSPHRASE/);
    closeAll();
    const again = openVault(dir, { passphrase: 'correct horse battery staple' });
    await again.ready;
    expect(await tokenFor(again, vaultId)).toBe(TOKEN);
    // Using a locked vault says why.
    closeAll();
    const wrong = openVault(dir, { passphrase: 'nope' });
    await expect(wrong.createCredential(vaultId, { auth: { type: 'model_api_key', api_key: 'sk-ant-123456789' } })).rejects.toThrow(/the vault is locked: .*wrong passphrase/);
  });

  it('a vault sealed with a key file refuses a passphrase (and the other way round) once it holds values; an empty one switches', async () => {
    const dir = tmpDir();
    await plant(openVault(dir));
    closeAll();
    await expect(openVault(dir, { passphrase: 'pw-123456' }).ready).rejects.toThrow(/locked with the key file .*unset CORRAL_VAULT_PASSPHRASE/);
    closeAll();
    const empty = tmpDir();
    await openVault(empty).ready;
    closeAll();
    const switched = openVault(empty, { passphrase: 'pw-123456' });
    await switched.ready;
    expect(switched.keySource!.mode).toBe('passphrase');
  });
});

describe('sealed values', () => {
  it('are bound to their row: a value copied onto another credential does not open', async () => {
    const dir = tmpDir();
    const vault = openVault(dir);
    const a = await plant(vault);
    const b = await vault.createCredential(a.vaultId, { auth: { type: 'static_bearer', mcp_server_url: 'https://other.example.com/', token: 'other-token-123' } });
    closeAll();
    const db = new Database(path.join(dir, 'corral.sqlite'));
    db.prepare('UPDATE vault_credentials SET secret = (SELECT secret FROM vault_credentials WHERE id = ?) WHERE id = ?').run(a.id, b.id);
    db.close();
    const again = openVault(dir);
    await again.ready; // the other credentials still work
    expect(await tokenFor(again, a.vaultId)).toBe(TOKEN);
    const { session } = opened.at(-1)!.log.createSession({ record: { vault_ids: [a.vaultId] } });
    await expect(again.resolve(session.id, { use: 'mcp', server_url: 'https://other.example.com/' })).rejects.toThrow(/does not open/);
  });
});
