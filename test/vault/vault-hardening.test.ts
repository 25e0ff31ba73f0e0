/**
 * The egress CA's private key sealed with the vault's key (a plain one migrated), the proxies'
 * capabilities void for ended and revoked sessions across a new host on the same data folder,
 * and the API server's port refused by the egress proxy even where a credential names loopback.
 * (The same after kill -9 of `serve`: test/vault/restart.test.ts.)
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openDatabase } from '../../main/session/db';
import { SessionLog } from '../../main/session/store';
import { startHostVault, type HostVault } from '../../main/vault';
import { makeCa } from '../../main/vault/x509';
import { tmpDir } from '../helpers/tmp';

const opened: { hv: HostVault; log: SessionLog }[] = [];
afterEach(async () => {
  for (const o of opened.splice(0)) {
    await o.hv.close();
    o.log.close();
  }
});

async function open(dataDir: string, egress: Parameters<typeof startHostVault>[0]['egress'] = {}): Promise<{ hv: HostVault; log: SessionLog }> {
  const db = openDatabase({ file: path.join(dataDir, 'corral.sqlite') });
  const log = new SessionLog(db);
  const hv = startHostVault({ db, log, dataDir, env: {}, egress });
  opened.push({ hv, log });
  await hv.ready;
  await hv.egressProxy.listening;
  return { hv, log };
}
async function closeAll(): Promise<void> {
  for (const o of opened.splice(0)) {
    await o.hv.close();
    o.log.close();
  }
}

describe('the egress CA key at rest', () => {
  it('is sealed with the vault key: no PEM in the file, the same CA after a restart, and nothing without the vault key', async () => {
    const dataDir = tmpDir('corral-ca-sealed-');
    const { hv } = await open(dataDir);
    const cert = await hv.egressProxy.ca!.certPem();
    await hv.egressProxy.ca!.contextFor('example.com');
    const keyFile = path.join(dataDir, 'egress-ca.key');
    const stored = fs.readFileSync(keyFile);
    expect(stored.toString('latin1')).not.toContain('PRIVATE KEY');
    expect(stored[0]).toBe(1); // the sealed layout's version byte
    expect(fs.statSync(keyFile).mode & 0o777).toBe(0o600);
    await closeAll();
    const again = await open(dataDir);
    expect(await again.hv.egressProxy.ca!.certPem()).toBe(cert);
    await again.hv.egressProxy.ca!.contextFor('example.com');
    await closeAll();
    // The data folder copied away without vault.key: a new vault key, and the old CA key does not open.
    const copy = tmpDir('corral-ca-copy-');
    for (const f of ['corral.sqlite', 'egress-ca.key', 'egress-ca.pem']) fs.copyFileSync(path.join(dataDir, f), path.join(copy, f));
    const stranger = await open(copy);
    expect(await stranger.hv.egressProxy.ca!.certPem()).not.toBe(cert);
  });

  it('an older plain PEM key is sealed in place at first use and the CA stays the same', async () => {
    const dataDir = tmpDir('corral-ca-migrate-');
    const old = await makeCa('an older plain CA');
    fs.writeFileSync(path.join(dataDir, 'egress-ca.pem'), old.certPem);
    fs.writeFileSync(path.join(dataDir, 'egress-ca.key'), old.keyPem, { mode: 0o600 });
    const { hv } = await open(dataDir);
    expect(await hv.egressProxy.ca!.certPem()).toBe(old.certPem);
    const stored = fs.readFileSync(path.join(dataDir, 'egress-ca.key'));
    expect(stored.toString('latin1')).not.toContain('PRIVATE KEY');
    expect(stored.toString('latin1')).not.toContain(old.keyPem.split('\n')[1]!);
    await closeAll();
    const again = await open(dataDir);
    expect(await again.hv.egressProxy.ca!.certPem()).toBe(old.certPem);
  });
});

describe('proxy capabilities end with their session, for good', () => {
  /** A git_token repository route and an egress capability for a new session naming a vault. */
  async function session(hv: HostVault, log: SessionLog, vaultId: string) {
    const { session } = log.createSession({ record: { vault_ids: [vaultId] } });
    const route = await hv.gitProxy.route(session.id, 'http://127.0.0.1:9/repo.git');
    const proxy = new URL(await hv.egressProxy.proxyUrl(session.id, { host: '127.0.0.1', port: hv.egressProxy.port! }));
    return { id: session.id, route: route!, proxyAuth: `Basic ${Buffer.from(`${proxy.username}:${proxy.password}`).toString('base64')}` };
  }
  /** The git proxy's answer to an info/refs under the route (403: the capability is refused; 502: it was honoured, the upstream is down). */
  const gitStatus = (port: number, p: string) =>
    new Promise<number>((resolve, reject) => {
      http.get({ host: '127.0.0.1', port, path: `${p}/info/refs?service=git-upload-pack` }, (res) => (res.resume(), resolve(res.statusCode!))).on('error', reject);
    });
  /** The egress proxy's answer to a plain request to a closed loopback port named by no credential (407: refused capability; 403: guard). */
  const egressStatus = (port: number, auth: string) =>
    new Promise<number>((resolve, reject) => {
      http.get({ host: '127.0.0.1', port, path: 'http://127.0.0.1:9/x', headers: { 'proxy-authorization': auth } }, (res) => (res.resume(), resolve(res.statusCode!))).on('error', reject);
    });

  it('deleted, archived and revoked sessions are refused, also by a new host on the same data folder; a live one is not', async () => {
    const dataDir = tmpDir('corral-caps-');
    const { hv, log } = await open(dataDir);
    const v = hv.vault.createVault({ display_name: 'r' });
    await hv.vault.createCredential(v.id, { auth: { type: 'git_token', token: `ghp_${crypto.randomBytes(12).toString('hex')}`, repository_urls: ['http://127.0.0.1:9/repo.git'] } });
    const live = await session(hv, log, v.id);
    const deleted = await session(hv, log, v.id);
    const archived = await session(hv, log, v.id);
    const revoked = await session(hv, log, v.id);
    for (const s of [live, deleted, archived, revoked]) {
      expect(await gitStatus(hv.gitProxy.port!, s.route.path)).toBe(502);
      expect(await egressStatus(hv.egressProxy.port!, s.proxyAuth)).toBe(403);
    }
    log.deleteSession(deleted.id);
    log.archiveSession(archived.id);
    await hv.revokeProxies(revoked.id);
    const check = async (h: HostVault) => {
      expect(await gitStatus(h.gitProxy.port!, live.route.path)).toBe(502);
      expect(await egressStatus(h.egressProxy.port!, live.proxyAuth)).toBe(403);
      for (const s of [deleted, archived, revoked]) {
        expect(await gitStatus(h.gitProxy.port!, s.route.path)).toBe(403);
        expect(await egressStatus(h.egressProxy.port!, s.proxyAuth)).toBe(407);
      }
    };
    await check(hv);
    await closeAll();
    expect(fs.readFileSync(path.join(dataDir, 'proxy-caps.revoked'), 'utf8')).toBe(`${revoked.id}\n`);
    await check((await open(dataDir)).hv);
  });
});

describe("the API server's own port", () => {
  it('is never a destination of the egress proxy, even for a credential that names 127.0.0.1', async () => {
    const seen: string[] = [];
    const api = http.createServer((req, res) => (seen.push(req.url ?? ''), res.end('api\n')));
    await new Promise<void>((resolve) => api.listen(0, '127.0.0.1', resolve));
    const apiPort = (api.address() as AddressInfo).port;
    const free = http.createServer((_req, res) => res.end('free\n'));
    await new Promise<void>((resolve) => free.listen(0, '127.0.0.1', resolve));
    try {
      const { hv, log } = await open(tmpDir('corral-apiport-'), { ownPorts: [apiPort] });
      const v = hv.vault.createVault({ display_name: 'e' });
      await hv.vault.createCredential(v.id, {
        auth: { type: 'environment_variable', secret_name: 'T', secret_value: `v-${crypto.randomBytes(8).toString('hex')}`, networking: { type: 'limited', allowed_hosts: ['127.0.0.1'] } },
      } as never);
      const { session } = log.createSession({ record: { vault_ids: [v.id] } });
      const u = new URL(await hv.egressProxy.proxyUrl(session.id, { host: '127.0.0.1', port: hv.egressProxy.port! }));
      const auth = `Basic ${Buffer.from(`${u.username}:${u.password}`).toString('base64')}`;
      const ask = (target: string) =>
        new Promise<{ status: number; body: string }>((resolve, reject) => {
          http.get({ host: '127.0.0.1', port: hv.egressProxy.port, path: target, headers: { 'proxy-authorization': auth } }, (res) => {
            let body = '';
            res.on('data', (c: Buffer) => (body += c.toString()));
            res.on('end', () => resolve({ status: res.statusCode!, body }));
          }).on('error', reject);
        });
      // The credential opens 127.0.0.1 (the control: another port there is reached) but never the API's port.
      expect(await ask(`http://127.0.0.1:${(free.address() as AddressInfo).port}/x`)).toMatchObject({ status: 200, body: 'free\n' });
      const r = await ask(`http://127.0.0.1:${apiPort}/v1/sessions`);
      expect(r.status).toBe(403);
      expect(r.body).toContain("the host's own service");
      expect(seen).toEqual([]);
    } finally {
      api.close();
      free.close();
    }
  });
});
