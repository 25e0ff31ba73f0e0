import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../main/session/db';
import { SessionLog } from '../../main/session/store';
import { exchangeRefreshToken, OAuthRefreshError } from '../../main/vault/oauth';
import { Vault } from '../../main/vault/vault';
import { tmpDir } from '../helpers/tmp';

/** A small OAuth token endpoint: refresh tokens rotate, clients authenticate as configured. */
const clients: Record<string, { secret?: string; method: 'none' | 'client_secret_basic' | 'client_secret_post' }> = {
  'public-app': { method: 'none' },
  'basic app:1': { secret: 's3cret/with+odd chars', method: 'client_secret_basic' },
  'post-app': { secret: 'post-secret-123', method: 'client_secret_post' },
};
let live = new Map<string, string>(); // refresh token → client id
let issued = 0;
const seen: { form: Record<string, string>; authorization?: string }[] = [];
let server: http.Server;
let endpoint: string;

beforeAll(async () => {
  server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const form = Object.fromEntries(new URLSearchParams(body));
      seen.push({ form, authorization: req.headers.authorization });
      const fail = (status: number, error: string) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ error, error_description: `says the test server` }));
      if (req.headers['content-type'] !== 'application/x-www-form-urlencoded' || form.grant_type !== 'refresh_token') return fail(400, 'unsupported_grant_type');
      let clientId = form.client_id;
      let secret = form.client_secret;
      if (req.headers.authorization?.startsWith('Basic ')) {
        const [id, sec] = Buffer.from(req.headers.authorization.slice(6), 'base64').toString().split(':');
        clientId = decodeURIComponent(id!.replace(/\+/g, ' '));
        secret = decodeURIComponent(sec!.replace(/\+/g, ' '));
        if (clients[clientId]?.method !== 'client_secret_basic') return fail(401, 'invalid_client');
      }
      const client = clientId ? clients[clientId] : undefined;
      if (!client || (client.method !== 'none' && client.secret !== secret)) return fail(401, 'invalid_client');
      if (live.get(form.refresh_token ?? '') !== clientId) return fail(400, 'invalid_grant');
      live.delete(form.refresh_token!);
      issued++;
      const next = `rt-${issued}-rotated-token`;
      live.set(next, clientId!);
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ access_token: `at-${issued}-fresh-token`, token_type: 'Bearer', expires_in: 3600, refresh_token: next }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}/token`;
});
afterAll(() => new Promise((r) => server.close(r)));

describe('the refresh-token exchange', () => {
  it('authenticates the client as configured (none, client_secret_basic, client_secret_post) and returns the new tokens', async () => {
    live = new Map([
      ['rt-a-original', 'public-app'],
      ['rt-b-original', 'basic app:1'],
      ['rt-c-original', 'post-app'],
    ]);
    const now = Date.parse('2030-01-01T00:00:00Z');
    const a = await exchangeRefreshToken({ token_endpoint: endpoint, client_id: 'public-app', refresh_token: 'rt-a-original', token_endpoint_auth: 'none', scope: 'read' }, { now: () => now });
    expect(a).toEqual({ access_token: expect.stringMatching(/^at-\d+-fresh-token$/), expires_at: '2030-01-01T01:00:00.000Z', refresh_token: expect.stringMatching(/^rt-/) });
    expect(seen.at(-1)!.form).toMatchObject({ grant_type: 'refresh_token', client_id: 'public-app', scope: 'read' });
    expect(seen.at(-1)!.authorization).toBeUndefined();

    await exchangeRefreshToken({ token_endpoint: endpoint, client_id: 'basic app:1', client_secret: 's3cret/with+odd chars', refresh_token: 'rt-b-original', token_endpoint_auth: 'client_secret_basic' });
    expect(seen.at(-1)!.form.client_secret).toBeUndefined();
    expect(seen.at(-1)!.authorization).toMatch(/^Basic /);

    await exchangeRefreshToken({ token_endpoint: endpoint, client_id: 'post-app', client_secret: 'post-secret-123', refresh_token: 'rt-c-original', token_endpoint_auth: 'client_secret_post', resource: 'https://mcp.example/' });
    expect(seen.at(-1)!.form).toMatchObject({ client_id: 'post-app', client_secret: 'post-secret-123', resource: 'https://mcp.example/' });
  });

  it('reports a refused refresh (invalid_grant) and an unreachable endpoint', async () => {
    const err = await exchangeRefreshToken({ token_endpoint: endpoint, client_id: 'public-app', refresh_token: 'rt-used-up', token_endpoint_auth: 'none' }).catch((e) => e);
    expect(err).toBeInstanceOf(OAuthRefreshError);
    expect(err).toMatchObject({ status: 400, oauthError: 'invalid_grant' });
    expect(err.message).not.toContain('rt-used-up');
    const down = await exchangeRefreshToken({ token_endpoint: 'http://127.0.0.1:1/token', client_id: 'x', refresh_token: 'y', token_endpoint_auth: 'none' }).catch((e) => e);
    expect(down).toBeInstanceOf(OAuthRefreshError);
    expect(down.status).toBeUndefined();
  });
});

describe('mcp_oauth credentials', () => {
  it('a token about to expire is refreshed when a session resolves it; the rotated refresh token is kept for the next time', async () => {
    const dataDir = tmpDir();
    const db = openDatabase({ file: path.join(dataDir, 'corral.sqlite') });
    const log = new SessionLog(db);
    const vault = new Vault({ db, log, dataDir, env: {} });
    try {
      await vault.ready;
      live = new Map([['rt-vault-original', 'post-app']]);
      const v = vault.createVault({ display_name: 'mcp' });
      const soon = new Date(Date.now() + 30_000).toISOString();
      const cred = await vault.createCredential(v.id, {
        auth: {
          type: 'mcp_oauth',
          mcp_server_url: 'https://mcp.example.com/mcp',
          access_token: 'at-original-expiring',
          expires_at: soon,
          refresh: { client_id: 'post-app', refresh_token: 'rt-vault-original', token_endpoint: endpoint, token_endpoint_auth: { type: 'client_secret_post', client_secret: 'post-secret-123' } },
        },
      });
      const { session } = log.createSession({ record: { vault_ids: [v.id] } });
      const got = await vault.resolve(session.id, { use: 'mcp', server_url: 'https://mcp.example.com/mcp' });
      expect((got!.secret as { access_token: string }).access_token).toMatch(/^at-\d+-fresh-token$/);
      const after = vault.getCredential(v.id, cred.id)!;
      expect(Date.parse(after.auth.expires_at as string)).toBeGreaterThan(Date.now() + 3000_000);
      expect(JSON.stringify(after)).not.toContain('fresh-token');
      // The rotated refresh token was stored: an explicit refresh succeeds with it.
      const again = await vault.refreshOAuth(v.id, cred.id);
      expect(again.id).toBe(cred.id);
      // The new values are redacted like the old ones were.
      const current = (await vault.resolve(session.id, { use: 'mcp', server_url: 'https://mcp.example.com/mcp' }))!.secret as { access_token: string };
      expect(vault.redactText(`token ${current.access_token}`)).toBe(`token [redacted: credential ${cred.id}]`);
      // A use is recorded in the session's log only when the caller says it happened.
      expect(log.getEvents(session.id).filter((e) => e.type === 'vault.credential_used')).toHaveLength(0);
      got!.recordUse('POST https://mcp.example.com/mcp');
      expect(log.getEvents(session.id).find((e) => e.type === 'vault.credential_used')).toMatchObject({ credential_id: cred.id, kind: 'mcp_oauth', purpose: 'mcp', target: 'POST https://mcp.example.com/mcp' });
    } finally {
      vault.close();
      log.close();
    }
  });
});
