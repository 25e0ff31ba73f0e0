import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openDatabase } from '../../main/session/db';
import { SessionLog } from '../../main/session/store';
import { ModelKeyCache } from '../../main/vault/model-key-cache';
import { Vault } from '../../main/vault/vault';
import { tmpDir } from '../helpers/tmp';

const opened: (() => void)[] = [];
afterEach(() => {
  for (const close of opened.splice(0)) close();
});

/** A real vault and log, the cache over the vault, and how many lookups reached the vault. */
async function setup() {
  const dataDir = tmpDir('corral-model-key-cache-');
  const db = openDatabase({ file: path.join(dataDir, 'corral.sqlite') });
  const log = new SessionLog(db);
  const env: NodeJS.ProcessEnv = { ANTHROPIC_API_KEY: 'sk-env-1' };
  const vault = new Vault({ db, log, dataDir, env });
  await vault.ready;
  let lookups = 0;
  const modelKey = vault.modelKey.bind(vault);
  vault.modelKey = (id) => (lookups++, modelKey(id));
  const cache = new ModelKeyCache(vault, log);
  opened.push(() => {
    cache.close();
    vault.close();
    log.close();
  });
  return { vault, log, env, cache, lookups: () => lookups };
}

describe('model key cache', () => {
  it('looks a session’s key up once, and again after each change it depends on', async () => {
    const { vault, log, env, cache, lookups } = await setup();
    const own = vault.createVault({ display_name: 'own' });
    const { session } = log.createSession({ record: { vault_ids: [] } });
    const value = async () => (await cache.modelKey(session.id))?.value;

    expect(await value()).toBe('sk-env-1');
    expect(await value()).toBe('sk-env-1');
    expect(lookups()).toBe(1);

    // The environment fallback is read live.
    env.ANTHROPIC_API_KEY = 'sk-env-2';
    expect(await value()).toBe('sk-env-2');

    // A default vault with a key takes over from the environment.
    const dflt = vault.createVault({ display_name: 'default', is_default: true });
    const d = await vault.createCredential(dflt.id, { auth: { type: 'model_api_key', api_key: 'sk-default-1' } });
    expect(await value()).toBe('sk-default-1');

    // The session's record names a vault with its own key.
    const c = await vault.createCredential(own.id, { auth: { type: 'model_api_key', api_key: 'sk-own-1' } });
    expect(await value()).toBe('sk-default-1');
    log.updateSessionRecord(session.id, (r) => ({ ...r, vault_ids: [own.id] }));
    expect(await value()).toBe('sk-own-1');
    const before = lookups();
    expect(await value()).toBe('sk-own-1');
    expect(lookups()).toBe(before);

    // Rotated, archived: each is seen at the next request.
    await vault.updateCredential(own.id, c.id, { auth: { type: 'model_api_key', api_key: 'sk-own-2' } });
    expect(await value()).toBe('sk-own-2');
    vault.archiveCredential(own.id, c.id);
    expect(await value()).toBe('sk-default-1');
    vault.deleteCredential(dflt.id, d.id);
    expect(await value()).toBe('sk-env-2');

    // A use of a credential (last_used_at) is not a change: still one lookup.
    const again = await vault.createCredential(own.id, { auth: { type: 'model_api_key', api_key: 'sk-own-3' } });
    const got = await cache.modelKey(session.id);
    expect(got?.value).toBe('sk-own-3');
    const n = lookups();
    got?.credential?.recordUse('POST https://api.example.com/v1/messages');
    expect((await cache.modelKey(session.id))?.value).toBe('sk-own-3');
    expect(lookups()).toBe(n);
    expect(log.getEvents(session.id, { types: ['vault.credential_used'] }).at(-1)).toMatchObject({ credential_id: again.id });
  });

  it('keeps sessions apart', async () => {
    const { vault, log, cache } = await setup();
    const v = vault.createVault({ display_name: 'v' });
    await vault.createCredential(v.id, { auth: { type: 'model_api_key', api_key: 'sk-vault-a' } });
    const a = log.createSession({ record: { vault_ids: [v.id] } }).session.id;
    const b = log.createSession({ record: { vault_ids: [] } }).session.id;
    expect((await cache.modelKey(a))?.value).toBe('sk-vault-a');
    expect((await cache.modelKey(b))?.value).toBe('sk-env-1');
    expect((await cache.modelKey(a))?.value).toBe('sk-vault-a');
  });
});
