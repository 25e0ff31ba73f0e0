import fs from 'node:fs';
import path from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server';

// Environment keys live in the vault: made once and shown once, kept as an `environment_key`
// credential (sealed, listed without a value, archived when the key is revoked), and a key
// whose credential is archived or deleted in the vault stops working. Each session a key
// fetches work for gets a ledger event. The official SDK against the host's HTTP server.

let t: TestServer;
let envId: string;
let agentId: string;

const asWorker = (key: string) => new Anthropic({ baseURL: t.server.url, apiKey: null, authToken: key, maxRetries: 0 });
const call = async (method: string, p: string, body?: unknown) => {
  const res = await fetch(`${t.server.url}${p}`, { method, headers: { 'x-api-key': t.apiKey, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as any };
};
const makeKey = async (name?: string) => (await call('POST', `/v1/environments/${envId}/keys`, name ? { name } : {})).body as { id: string; key: string; vault_id: string; credential_id: string };
async function until<T>(probe: () => T | undefined | false | Promise<T | undefined | false>): Promise<T> {
  for (let i = 0; i < 400; i++) {
    const v = await probe();
    if (v) return v;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error('timed out');
}

beforeAll(async () => {
  t = await startTestServer();
  envId = (await t.client.beta.environments.create({ name: 'dial', config: { type: 'self_hosted' } as never })).id;
  agentId = (await t.client.beta.agents.create({ name: 'a', model: 'claude-test', tools: [{ type: 'agent_toolset_20260401' }] })).id;
});
afterAll(async () => {
  await t?.close();
});

describe('environment keys in the vault', () => {
  it('a new key is an environment_key credential: listed with name, kind, scope and last use, never its value, and sealed at rest', async () => {
    const k = await makeKey('laptop');
    expect(k.key).toMatch(/^corral-envkey-/);
    expect(k.vault_id).toBeTruthy();
    expect(k.credential_id).toBeTruthy();
    const cred = await t.client.beta.vaults.credentials.retrieve(k.credential_id, { vault_id: k.vault_id });
    expect(cred).toMatchObject({ id: k.credential_id, display_name: 'laptop', auth: { type: 'environment_key', environment_id: envId, key_id: k.id }, archived_at: null });
    // The key's vault is the host's default one (made, named Machines, when there was none).
    expect(await t.client.beta.vaults.retrieve(k.vault_id)).toMatchObject({ display_name: 'Machines', is_default: true });
    const everything = JSON.stringify([cred, (await call('GET', `/v1/environments/${envId}/keys`)).body, (await call('GET', `/v1/vaults/${k.vault_id}/credentials`)).body]);
    expect(everything).not.toContain(k.key);
    expect(everything).not.toContain(k.key.slice('corral-envkey-'.length));
    // Neither the database nor its write-ahead log holds it in the clear.
    const dir = t.host.dataDir;
    for (const f of fs.readdirSync(dir).filter((n) => n.startsWith('corral.sqlite'))) {
      expect(fs.readFileSync(path.join(dir, f)).includes(Buffer.from(k.key.slice('corral-envkey-'.length)))).toBe(false);
    }
    // A worker's use moves the credential's last use.
    expect(await asWorker(k.key).beta.environments.work.poll(envId)).toBeNull();
    await until(async () => (await t.client.beta.vaults.credentials.retrieve(k.credential_id, { vault_id: k.vault_id }) as unknown as { last_used_at: string | null }).last_used_at);
  });

  it("fetching a session's work with a key is a ledger event in that session's log (which key, never its value)", async () => {
    const k = await makeKey();
    const session = await t.client.beta.sessions.create({ agent: agentId, environment_id: envId } as never);
    t.host.dialIn.enqueue(envId, session.id, 'session', 'main');
    const item = await asWorker(k.key).beta.environments.work.poll(envId);
    expect(item?.data).toEqual({ type: 'session', id: session.id });
    const used = await until(() => t.host.log.getEvents(session.id, { types: ['vault.credential_used'] as never, limit: 10 })[0]);
    expect(used).toMatchObject({ type: 'vault.credential_used', credential_id: k.credential_id, vault_id: k.vault_id, kind: 'environment_key', purpose: 'dial_in' });
    expect(String(used.target)).toContain(item!.id);
    expect(JSON.stringify(t.host.log.getEvents(session.id, {}))).not.toContain(k.key);
  });

  it('revoking a key archives its credential; archiving or deleting the credential in the vault revokes the key', async () => {
    const revoked = await makeKey();
    expect((await call('POST', `/v1/environments/${envId}/keys/${revoked.id}/revoke`)).status).toBe(200);
    expect((await t.client.beta.vaults.credentials.retrieve(revoked.credential_id, { vault_id: revoked.vault_id })).archived_at).not.toBeNull();
    await expect(asWorker(revoked.key).beta.environments.work.poll(envId)).rejects.toBeInstanceOf(Anthropic.AuthenticationError);

    const archived = await makeKey();
    expect(await asWorker(archived.key).beta.environments.work.poll(envId)).toBeNull();
    await t.client.beta.vaults.credentials.archive(archived.credential_id, { vault_id: archived.vault_id });
    await expect(asWorker(archived.key).beta.environments.work.poll(envId)).rejects.toBeInstanceOf(Anthropic.AuthenticationError);

    const deleted = await makeKey();
    await t.client.beta.vaults.credentials.delete(deleted.credential_id, { vault_id: deleted.vault_id });
    const listed = (await call('GET', `/v1/environments/${envId}/keys`)).body.data as { id: string; revoked_at: string | null }[];
    expect(listed.find((x) => x.id === deleted.id)?.revoked_at).not.toBeNull();
    expect(listed.find((x) => x.id === archived.id)?.revoked_at).not.toBeNull();
    await expect(asWorker(deleted.key).beta.environments.work.poll(envId)).rejects.toBeInstanceOf(Anthropic.AuthenticationError);
  });

  it('an environment_key credential cannot be made or changed through the vault API', async () => {
    const k = await makeKey();
    const made = await call('POST', `/v1/vaults/${k.vault_id}/credentials`, { auth: { type: 'environment_key', environment_id: envId, key_id: 'x', key: 'corral-envkey-0123456789' } });
    expect(made.status).toBe(400);
    const changed = await call('POST', `/v1/vaults/${k.vault_id}/credentials/${k.credential_id}`, { auth: { type: 'environment_key', key: 'corral-envkey-0123456789' } });
    expect(changed.status).toBe(400);
    // Its name may change; it still works.
    expect((await call('POST', `/v1/vaults/${k.vault_id}/credentials/${k.credential_id}`, { display_name: 'renamed' })).status).toBe(200);
    expect(await asWorker(k.key).beta.environments.work.poll(envId)).toBeNull();
  });
});
