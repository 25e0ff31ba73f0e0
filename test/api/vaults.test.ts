import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import Database from 'better-sqlite3';
import * as ssh2 from 'ssh2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server';
import { tmpDir } from '../helpers/tmp';

const sshUtils: typeof ssh2.utils = ssh2.utils ?? (ssh2 as unknown as { default: typeof ssh2 }).default.utils;

// Every secret this file plants: none may come back in a response, an event, a log line or the database file.
const rnd = (p: string) => `${p}${crypto.randomBytes(16).toString('hex')}`;
const S = {
  bearer: rnd('bearer-'),
  bearer2: rnd('bearer-rotated-'),
  access: rnd('access-'),
  refresh: rnd('refresh-'),
  clientSecret: rnd('client-secret-'),
  envValue: rnd('env-value-'),
  gitToken: rnd('ghp_'),
  modelKey: rnd('sk-ant-api03-'),
  sshPassphrase: rnd('ssh-pass-'),
};
const ssh = sshUtils.generateKeyPairSync('ed25519', { passphrase: S.sshPassphrase, cipher: 'aes256-ctr', rounds: 16 });

let t: TestServer;
const bodies: string[] = [];
const output: string[] = [];
let restore: () => void;

beforeAll(async () => {
  // Every line the process writes while this file runs (the host logs to these).
  const [out, err] = [process.stdout.write.bind(process.stdout), process.stderr.write.bind(process.stderr)];
  process.stdout.write = ((chunk: unknown, ...rest: unknown[]) => (output.push(String(chunk)), out(chunk as never, ...(rest as [])))) as never;
  process.stderr.write = ((chunk: unknown, ...rest: unknown[]) => (output.push(String(chunk)), err(chunk as never, ...(rest as [])))) as never;
  restore = () => {
    process.stdout.write = out;
    process.stderr.write = err;
  };
  t = await startTestServer();
  // The SDK, with every response body kept.
  t.client = new Anthropic({
    apiKey: t.apiKey,
    baseURL: t.server.url,
    maxRetries: 0,
    fetch: async (url, init) => {
      const res = await fetch(url, init);
      bodies.push(await res.clone().text());
      return res;
    },
  });
});
afterAll(async () => {
  restore();
  await t.close();
});

/** Every form of every planted secret a leak would take. */
function needles(): string[] {
  const values = Object.values(S);
  const keyLines = ssh.private
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l.length >= 16 && !l.startsWith('-----'))
    // The first line is the fixed "openssh-key-v1 … aes256-ctr … bcrypt" header of every such key.
    .slice(1);
  return [...values, ...values.map((v) => Buffer.from(v).toString('base64')), ...keyLines];
}

async function all<T>(page: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of page) out.push(x);
  return out;
}

const corral = <T>(x: T) => x as never;

describe('client.beta.vaults', () => {
  it('creates, retrieves, updates, lists with pages and archived ones, archives and deletes', async () => {
    const v = await t.client.beta.vaults.create({ display_name: 'team', metadata: { env: 'prod' } });
    expect(v).toMatchObject({ type: 'vault', display_name: 'team', metadata: { env: 'prod' }, archived_at: null, is_default: false });
    expect(v.id).toMatch(/^vlt_/);
    expect(await t.client.beta.vaults.retrieve(v.id)).toEqual(v);
    const u = await t.client.beta.vaults.update(v.id, { display_name: 'team-2', metadata: { env: null, owner: 'me' } });
    expect(u).toMatchObject({ display_name: 'team-2', metadata: { owner: 'me' } });

    const more = [];
    for (let i = 0; i < 3; i++) more.push(await t.client.beta.vaults.create({ display_name: `v${i}` }));
    const page = await t.client.beta.vaults.list({ limit: 2 });
    expect(page.data.map((x) => x.id)).toEqual([more[2]!.id, more[1]!.id]);
    expect(page.hasNextPage()).toBe(true);
    const listed = (await all(t.client.beta.vaults.list({ limit: 2 }))).map((x) => x.id);
    expect(listed).toEqual(expect.arrayContaining([v.id, ...more.map((m) => m.id)]));

    const archived = await t.client.beta.vaults.archive(more[0]!.id);
    expect(archived.archived_at).not.toBeNull();
    expect((await all(t.client.beta.vaults.list())).map((x) => x.id)).not.toContain(more[0]!.id);
    expect((await all(t.client.beta.vaults.list({ include_archived: true }))).map((x) => x.id)).toContain(more[0]!.id);
    await expect(t.client.beta.vaults.update(more[0]!.id, { display_name: 'x' })).rejects.toBeInstanceOf(Anthropic.BadRequestError);
    await expect(t.client.beta.vaults.credentials.create(more[0]!.id, { auth: { type: 'static_bearer', token: S.bearer, mcp_server_url: 'https://a.example/' } })).rejects.toBeInstanceOf(
      Anthropic.BadRequestError,
    );

    expect(await t.client.beta.vaults.delete(more[1]!.id)).toEqual({ id: more[1]!.id, type: 'vault_deleted' });
    await expect(t.client.beta.vaults.retrieve(more[1]!.id)).rejects.toBeInstanceOf(Anthropic.NotFoundError);
    await expect(t.client.beta.vaults.delete(more[1]!.id)).rejects.toBeInstanceOf(Anthropic.NotFoundError);

    // Corral: one vault is the host's default (for the model key).
    const d = await t.client.beta.vaults.create(corral({ display_name: 'default', is_default: true }));
    expect((d as unknown as { is_default: boolean }).is_default).toBe(true);
    await t.client.beta.vaults.update(v.id, corral({ is_default: true }));
    expect(((await t.client.beta.vaults.retrieve(d.id)) as unknown as { is_default: boolean }).is_default).toBe(false);
    expect(t.host.vault.defaultVaultId()).toBe(v.id);
  });

  it('refuses fields it does not act on with a 400 naming them', async () => {
    const bad = await t.client.beta.vaults.create(corral({ display_name: 'x', color: 'red' })).catch((e) => e);
    expect(bad).toBeInstanceOf(Anthropic.BadRequestError);
    expect(bad.error.error.message).toMatch(/color/);
    await expect(t.client.beta.vaults.create({ display_name: '' })).rejects.toBeInstanceOf(Anthropic.BadRequestError);
  });
});

describe('client.beta.vaults.credentials', () => {
  it('every kind: values go in, and only name, kind, scope and last use come out', async () => {
    const v = await t.client.beta.vaults.create({ display_name: 'creds' });
    const cred = t.client.beta.vaults.credentials;

    const bearer = await cred.create(v.id, { display_name: 'docs mcp', auth: { type: 'static_bearer', token: S.bearer, mcp_server_url: 'https://mcp.example.com/mcp' } });
    expect(bearer).toMatchObject({
      type: 'vault_credential',
      vault_id: v.id,
      display_name: 'docs mcp',
      auth: { type: 'static_bearer', mcp_server_url: 'https://mcp.example.com/mcp' },
      archived_at: null,
      last_used_at: null,
    });
    expect(Object.keys(bearer.auth).sort()).toEqual(['mcp_server_url', 'type']);
    expect(bearer.id).toMatch(/^vcrd_/);

    const expires = new Date(Date.now() + 3600_000).toISOString();
    const oauth = await cred.create(v.id, {
      auth: {
        type: 'mcp_oauth',
        access_token: S.access,
        mcp_server_url: 'https://oauth-mcp.example.com/',
        expires_at: expires,
        refresh: {
          client_id: 'corral-client',
          refresh_token: S.refresh,
          token_endpoint: 'https://auth.example.com/token',
          token_endpoint_auth: { type: 'client_secret_basic', client_secret: S.clientSecret },
          scope: 'read',
        },
      },
    });
    expect(oauth.auth).toEqual({
      type: 'mcp_oauth',
      mcp_server_url: 'https://oauth-mcp.example.com',
      expires_at: expires,
      refresh: { client_id: 'corral-client', token_endpoint: 'https://auth.example.com/token', token_endpoint_auth: { type: 'client_secret_basic' }, resource: null, scope: 'read' },
    });

    const env = await cred.create(v.id, {
      auth: { type: 'environment_variable', secret_name: 'STRIPE_KEY', secret_value: S.envValue, networking: { type: 'limited', allowed_hosts: ['api.stripe.com', '*.example.com'] } },
    });
    expect(env.auth).toEqual({
      type: 'environment_variable',
      secret_name: 'STRIPE_KEY',
      networking: { type: 'limited', allowed_hosts: ['api.stripe.com', '*.example.com'] },
      injection_location: { body: false, header: true },
    });

    const key = await cred.create(v.id, corral({ display_name: 'deploy key', auth: { type: 'ssh_private_key', private_key: ssh.private, passphrase: S.sshPassphrase, hosts: ['build.example.com'] } }));
    expect(key.auth).toMatchObject({ type: 'ssh_private_key', hosts: ['build.example.com'], key_type: 'ssh-ed25519', public_key: ssh.public.trim().split(' ').slice(0, 2).join(' ') });
    expect((key.auth as unknown as { fingerprint: string }).fingerprint).toMatch(/^SHA256:[A-Za-z0-9+/]{43}$/);

    const git = await cred.create(
      v.id,
      corral({ auth: { type: 'git_token', token: S.gitToken, repository_urls: ['https://GitHub.com/acme/app.git/'], hosts: ['git.example.com'] } }),
    );
    expect(git.auth).toEqual({ type: 'git_token', username: 'x-access-token', repository_urls: ['https://github.com/acme/app'], hosts: ['git.example.com'] });

    const model = await cred.create(v.id, corral({ auth: { type: 'model_api_key', api_key: S.modelKey } }));
    expect(model.auth).toEqual({ type: 'model_api_key', header: 'x-api-key' });

    // Listed and retrieved alike: no value, ever.
    const listed = await all(cred.list(v.id, { limit: 2 }));
    expect(listed.map((c) => c.id).sort()).toEqual([bearer.id, oauth.id, env.id, key.id, git.id, model.id].sort());
    expect(await cred.retrieve(key.id, { vault_id: v.id })).toEqual(key);

    // The values are in the vault, for the host only.
    const { session } = t.host.log.createSession({ record: { vault_ids: [v.id] } });
    const got = await t.host.vault.resolve(session.id, { use: 'git', url: 'https://github.com/acme/app' });
    expect(got?.secret).toEqual({ token: S.gitToken });
    expect(await t.host.vault.resolve(session.id, { use: 'git', url: 'https://github.com/acme/other' })).toBeUndefined();
    expect((await t.host.vault.resolve(session.id, { use: 'git', url: 'https://git.example.com/any/repo.git' }))?.credential.id).toBe(git.id);
    expect((await t.host.vault.resolve(session.id, { use: 'egress', host: 'x.example.com' }))?.credential.id).toBe(env.id);
    expect(await t.host.vault.resolve(session.id, { use: 'egress', host: 'example.com' })).toBeUndefined();
    expect(await t.host.vault.resolve(session.id, { use: 'ssh', host: 'other.example.com' })).toBeUndefined();
    expect((await t.host.vault.resolve(session.id, { use: 'ssh', host: 'build.example.com' }))?.secret).toEqual({ private_key: ssh.private, passphrase: S.sshPassphrase });
    expect(await t.host.vault.environmentPlaceholders(session.id)).toEqual({ STRIPE_KEY: `corral_vault_placeholder_${env.id}` });
    // A session that names no vault gets nothing from it.
    const { session: other } = t.host.log.createSession({ record: { vault_ids: [] } });
    expect(await t.host.vault.resolve(other.id, { use: 'mcp', server_url: 'https://mcp.example.com/mcp' })).toBeUndefined();

    // Rotation: a new value, the same credential; the response still shows none.
    const rotated = await cred.update(bearer.id, { vault_id: v.id, auth: { type: 'static_bearer', token: S.bearer2 }, metadata: { rotated: 'yes' } });
    expect(rotated).toMatchObject({ id: bearer.id, metadata: { rotated: 'yes' }, auth: { type: 'static_bearer', mcp_server_url: 'https://mcp.example.com/mcp' } });
    expect((await t.host.vault.resolve(session.id, { use: 'mcp', server_url: 'https://mcp.example.com/mcp/' }))?.secret).toEqual({ token: S.bearer2 });
    const moved = await cred.update(env.id, { vault_id: v.id, auth: { type: 'environment_variable', injection_location: { body: true }, networking: { type: 'unrestricted' } } });
    expect(moved.auth).toMatchObject({ networking: { type: 'unrestricted' }, injection_location: { body: true, header: true } });
    const noBoth = await cred.update(env.id, { vault_id: v.id, auth: { type: 'environment_variable', injection_location: { body: false, header: false } } }).catch((e) => e);
    expect(noBoth.error.error.message).toMatch(/at least one of body and header/);

    // Archive: kept, listed with include_archived, no longer used.
    const archived = await cred.archive(git.id, { vault_id: v.id });
    expect(archived.archived_at).not.toBeNull();
    expect((await all(cred.list(v.id))).map((c) => c.id)).not.toContain(git.id);
    expect((await all(cred.list(v.id, { include_archived: true }))).map((c) => c.id)).toContain(git.id);
    expect(await t.host.vault.resolve(session.id, { use: 'git', url: 'https://github.com/acme/app' })).toBeUndefined();
    await expect(cred.update(git.id, { vault_id: v.id, display_name: 'x' })).rejects.toBeInstanceOf(Anthropic.BadRequestError);

    expect(await cred.delete(oauth.id, { vault_id: v.id })).toEqual({ id: oauth.id, type: 'vault_credential_deleted' });
    await expect(cred.retrieve(oauth.id, { vault_id: v.id })).rejects.toBeInstanceOf(Anthropic.NotFoundError);
    // A credential is found only in its own vault.
    const elsewhere = await t.client.beta.vaults.create({ display_name: 'elsewhere' });
    await expect(cred.retrieve(env.id, { vault_id: elsewhere.id })).rejects.toBeInstanceOf(Anthropic.NotFoundError);
  });

  it('refuses what it cannot act on, naming the field, and stores nothing', async () => {
    const v = await t.client.beta.vaults.create({ display_name: 'refusals' });
    const cred = t.client.beta.vaults.credentials;
    const cases: [unknown, RegExp][] = [
      [{ auth: { type: 'static_bearer', token: S.bearer, mcp_server_url: 'https://m.example/', audience: 'x' } }, /audience/],
      [{ auth: { type: 'static_bearer', token: S.bearer, mcp_server_url: 'https://m.example/' }, scope: 'x' }, /scope/],
      [{ auth: { type: 'static_bearer', token: 'short', mcp_server_url: 'https://m.example/' } }, /shorter than 8/],
      [{ auth: { type: 'kerberos', token: S.bearer } }, /auth\.type/],
      [{ auth: { type: 'mcp_oauth', access_token: S.access, mcp_server_url: 'https://m.example/', expires_at: '2001-01-01T00:00:00Z' } }, /expires_at must be in the future/],
      [{ auth: { type: 'environment_variable', secret_name: '1BAD', secret_value: S.envValue, networking: { type: 'unrestricted' } } }, /secret_name/],
      [{ auth: { type: 'environment_variable', secret_name: 'X', secret_value: S.envValue, networking: { type: 'limited', allowed_hosts: ['https://api.x.com/path'] } } }, /allowed_hosts\[0\]/],
      [{ auth: { type: 'ssh_private_key', private_key: ssh.private } }, /protected by a passphrase/],
      [{ auth: { type: 'ssh_private_key', private_key: ssh.private, passphrase: 'wrong-passphrase' } }, /passphrase does not open/],
      [{ auth: { type: 'ssh_private_key', private_key: ssh.public, passphrase: null } }, /private_key/],
      [{ auth: { type: 'git_token', token: S.gitToken } }, /repository_urls or auth\.hosts/],
      [{ auth: { type: 'model_api_key', api_key: S.modelKey, base_url: 'https://x' } }, /base_url/],
    ];
    for (const [body, message] of cases) {
      const err = await cred.create(v.id, body as never).catch((e) => e);
      expect(err, JSON.stringify(body).slice(0, 80)).toBeInstanceOf(Anthropic.BadRequestError);
      expect(err.error.error.message).toMatch(message);
    }
    expect((await cred.list(v.id)).data).toEqual([]);
    // A malformed body is refused without quoting it.
    const res = await fetch(`${t.server.url}/v1/vaults/${v.id}/credentials`, {
      method: 'POST',
      headers: { 'x-api-key': t.apiKey, 'content-type': 'application/json' },
      body: `{"auth": {"type": "static_bearer", "token": "${S.bearer}", }`,
    });
    expect(res.status).toBe(400);
    expect(await res.text()).not.toContain(S.bearer.slice(0, 12));

    // One credential per MCP server URL and per variable name in a vault.
    await cred.create(v.id, { auth: { type: 'static_bearer', token: S.bearer, mcp_server_url: 'https://dup.example/' } });
    const dup = await cred.create(v.id, { auth: { type: 'static_bearer', token: S.bearer2, mcp_server_url: 'https://dup.example' } }).catch((e) => e);
    expect(dup).toBeInstanceOf(Anthropic.ConflictError);
    // The type cannot change.
    const c = (await cred.list(v.id)).data[0]!;
    const change = await cred.update(c.id, { vault_id: v.id, auth: { type: 'mcp_oauth', access_token: S.access } }).catch((e) => e);
    expect(change.error.error.message).toMatch(/auth\.type cannot change/);
  });
});

describe('sessions name their vaults', () => {
  it('vault_ids must exist and not be archived; they are stored and can be changed', async () => {
    const agent = await t.client.beta.agents.create({ name: 'a', model: 'claude-sonnet-4-5' });
    const env = await t.client.beta.environments.create({ name: 'e', config: corral({ type: 'local' }) });
    const v = await t.client.beta.vaults.create({ display_name: 'for sessions' });
    const old = await t.client.beta.vaults.create({ display_name: 'old' });
    await t.client.beta.vaults.archive(old.id);
    await expect(t.client.beta.sessions.create({ agent: agent.id, environment_id: env.id, vault_ids: ['vlt_nope'] })).rejects.toBeInstanceOf(Anthropic.NotFoundError);
    const archivedErr = await t.client.beta.sessions.create({ agent: agent.id, environment_id: env.id, vault_ids: [old.id] }).catch((e) => e);
    expect(archivedErr).toBeInstanceOf(Anthropic.BadRequestError);
    expect(archivedErr.error.error.message).toMatch(/archived/);
    const s = await t.client.beta.sessions.create({ agent: agent.id, environment_id: env.id, vault_ids: [v.id] });
    expect(s.vault_ids).toEqual([v.id]);
    await expect(t.client.beta.sessions.update(s.id, { vault_ids: [v.id, 'vlt_nope'] })).rejects.toBeInstanceOf(Anthropic.NotFoundError);
    const other = await t.client.beta.vaults.create({ display_name: 'other' });
    expect((await t.client.beta.sessions.update(s.id, { vault_ids: [other.id] })).vault_ids).toEqual([other.id]);
    expect(t.host.vault.sessionVaults(s.id)).toEqual([other.id]);
  });
});

describe('values never come out', () => {
  it('in no response, event or log line, and the database file copied away reveals none', async () => {
    const leaks = (where: string, text: string) => needles().filter((n) => text.includes(n)).map((n) => `${where}: ${n.slice(0, 16)}…`);
    const found: string[] = [];
    expect(bodies.length).toBeGreaterThan(30);
    for (const b of bodies) found.push(...leaks('response', b));
    for (const id of t.host.log.listSessions({ limit: 1000 }).data.map((s) => s.id)) {
      found.push(...leaks(`events of ${id}`, JSON.stringify(t.host.log.getEvents(id, { limit: 100_000 }))));
    }
    found.push(...leaks('output', output.join('')));
    // Raw bytes of every file in the data folder but the key itself (the WAL too).
    for (const f of fs.readdirSync(t.host.dataDir)) {
      if (f === 'vault.key' || !fs.statSync(path.join(t.host.dataDir, f)).isFile()) continue;
      found.push(...leaks(f, fs.readFileSync(path.join(t.host.dataDir, f)).toString('latin1')));
    }
    // The database file alone, as someone who copied it would see it: every table, every column.
    const copy = path.join(tmpDir(), 'copied.sqlite');
    await (new Database(path.join(t.host.dataDir, 'corral.sqlite'), { readonly: true }) as Database.Database & { backup(f: string): Promise<unknown> }).backup(copy);
    const db = new Database(copy, { readonly: true });
    const tables = (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as { name: string }[]).map((r) => r.name);
    expect(tables).toEqual(expect.arrayContaining(['vaults', 'vault_credentials', 'events', 'sessions']));
    let cells = 0;
    for (const table of tables) {
      for (const row of db.prepare(`SELECT * FROM "${table}"`).all() as Record<string, unknown>[]) {
        for (const [col, value] of Object.entries(row)) {
          cells++;
          const text = Buffer.isBuffer(value) ? value.toString('latin1') : String(value);
          found.push(...leaks(`${table}.${col}`, text));
        }
      }
    }
    db.close();
    expect(cells).toBeGreaterThan(50);
    expect(found).toEqual([]);
    // The search can fail: a planted value, or its base64, is found (a copy of the vault with
    // its values unsealed fails this test: tried by hand).
    expect(leaks('sample', `x ${Buffer.from(S.modelKey).toString('base64')} y`)).toHaveLength(1);
  });
});
