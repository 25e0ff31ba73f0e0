import { execFile } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EgressProxy } from '../../main/vault/egress-proxy';
import type { ResolvedCredential } from '../../main/vault/vault';
import { makeCa, makeLeafKey, mintServerCert } from '../../main/vault/x509';
import { tmpDir } from '../helpers/tmp';

const run = promisify(execFile);
const VALUE = `sk-tls-${Math.random().toString(36).slice(2)}${Math.random().toString(36).slice(2)}`;
const PLACEHOLDER = 'corral_vault_placeholder_vcrd_tls';

interface Seen {
  path: string;
  authorization?: string;
  body: string;
}
interface Upstream {
  url: string;
  port: number;
  seen: Seen[];
  server: http.Server;
}

/** An echo server; HTTPS with a certificate from the tests' own upstream CA when `tls` is given. */
async function upstream(host: string, tls?: { key: string; cert: string }): Promise<Upstream> {
  const seen: Seen[] = [];
  const onRequest = (req: http.IncomingMessage, res: http.ServerResponse) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => {
      seen.push({ path: req.url ?? '', authorization: req.headers.authorization, body: Buffer.concat(parts).toString('utf8') });
      // /echo answers with what it got, as an error page quoting the request might.
      if (req.url?.startsWith('/echo')) res.setHeader('x-seen', String(req.headers.authorization));
      res.end(req.url?.startsWith('/echo') ? `you sent ${req.headers.authorization} and ${Buffer.concat(parts).toString('utf8')}\n` : `ok ${host}\n`);
    });
  };
  const server = tls ? https.createServer(tls, onRequest) : http.createServer(onRequest);
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const port = (server.address() as AddressInfo).port;
  return { url: `${tls ? 'https' : 'http'}://${host}:${port}`, port, seen, server };
}

/** One credential as the vault resolves it, naming `hosts` (the proxy's own test seam, as in egress-proxy.test.ts). */
function credential(hosts: string[], used: string[]): ResolvedCredential {
  return {
    credential: { id: 'vcrd_tls', auth: { type: 'environment_variable', secret_name: 'API_TOKEN', networking: { type: 'limited', allowed_hosts: hosts }, injection_location: { header: true, body: true } } },
    secret: { secret_value: VALUE },
    recordUse: (target: string) => void used.push(target),
  } as unknown as ResolvedCredential;
}

let dataDir: string;
let upstreamCaPem: string;
let secure: Upstream; // 127.0.0.1, HTTPS: the allowed host
let other: Upstream; // 127.0.0.2, HTTPS: no credential names it
let plain: Upstream; // 127.0.0.3, HTTP
let proxy: EgressProxy;
let used: string[];
let proxyUrl: string;

beforeAll(async () => {
  dataDir = tmpDir('corral-egress-tls-');
  const upCa = await makeCa('upstream test CA');
  upstreamCaPem = upCa.certPem;
  const leaf = await makeLeafKey();
  secure = await upstream('127.0.0.1', { key: leaf.keyPem, cert: await mintServerCert(upCa, leaf.spki, '127.0.0.1') });
  other = await upstream('127.0.0.2', { key: leaf.keyPem, cert: await mintServerCert(upCa, leaf.spki, '127.0.0.2') });
  plain = await upstream('127.0.0.3');
  used = [];
  // The proxy refuses any local address at its own port number (egress-guard.ts). Ports are per
  // address, so the system may give the proxy (127.0.0.1) an upstream's number (127.0.0.2): then
  // the passthrough test got a 403 (CI-H). Such a proxy is made again, in a data folder of its own
  // (it would take its remembered port again).
  for (let attempt = 0; ; attempt++) {
    if (attempt > 0) dataDir = tmpDir('corral-egress-tls-');
    proxy = new EgressProxy(
      { resolveAll: async (_s, p) => (p.use === 'egress' && p.host === '127.0.0.1' ? [credential(['127.0.0.1'], used)] : []) },
      // Only these two loopback servers are open without a credential naming them.
      { dataDir, upstreamCa: upstreamCaPem, allowLocal: [`127.0.0.2:${other.port}`, `127.0.0.3:${plain.port}`] },
    );
    await proxy.listening;
    if (![secure.port, other.port, plain.port].includes(proxy.port!) || attempt === 5) break;
    await proxy.close();
  }
  proxyUrl = await proxy.proxyUrl('sesn_tls', { host: '127.0.0.1', port: proxy.port! });
}, 60_000);
afterAll(async () => {
  await proxy?.close();
  for (const u of [secure, other, plain]) u?.server.close();
});

/** curl through the proxy, trusting `caFile`; returns its output and exit code. */
async function curl(url: string, caFile: string, extra: string[] = []): Promise<{ out: string; code: number }> {
  try {
    const { stdout } = await run('curl', ['-sS', '--proxy', proxyUrl, '--cacert', caFile, '-H', `Authorization: Bearer ${PLACEHOLDER}`, '--data', `k=${PLACEHOLDER}`, ...extra, url], { env: { PATH: process.env.PATH } });
    return { out: stdout, code: 0 };
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string; code?: number };
    return { out: `${e.stdout ?? ''}${e.stderr ?? ''}`, code: e.code ?? -1 };
  }
}

describe('the egress proxy over HTTPS', () => {
  it('terminates TLS for an allowed host with a certificate from its own CA and substitutes there', async () => {
    const { caFile } = await proxy.ca!.localFiles();
    const r = await curl(`${secure.url}/in-tls`, caFile);
    expect(r).toMatchObject({ code: 0, out: 'ok 127.0.0.1\n' });
    const seen = secure.seen.find((s) => s.path === '/in-tls')!;
    expect(seen.authorization).toBe(`Bearer ${VALUE}`);
    expect(seen.body).toBe(`k=${VALUE}`);
    expect(used).toEqual([`POST ${secure.url}`]);
    // The CA is the one kept in the data folder; its key is private to the host's user.
    expect(fs.statSync(path.join(dataDir, 'egress-ca.key')).mode & 0o777).toBe(0o600);
    expect(fs.readFileSync(caFile, 'utf8')).toBe(await proxy.ca!.certPem());
  });

  it('an allowed host that echoes the value gives it back as the placeholder (body and headers)', async () => {
    const { caFile } = await proxy.ca!.localFiles();
    const r = await curl(`${secure.url}/echo`, caFile, ['-i']);
    expect(r.code).toBe(0);
    expect(secure.seen.find((s) => s.path === '/echo')!.authorization).toBe(`Bearer ${VALUE}`);
    expect(r.out).not.toContain(VALUE);
    expect(r.out).toContain(`you sent Bearer ${PLACEHOLDER} and k=${PLACEHOLDER}`);
    expect(r.out).toMatch(new RegExp(`x-seen: Bearer ${PLACEHOLDER}`, 'i'));
  });

  it('without the CA the client refuses the proxy\'s certificate (it is not the upstream\'s)', async () => {
    const before = secure.seen.length;
    const r = await curl(`${secure.url}/untrusted`, path.join(dataDir, 'nothing.pem'), ['--capath', '/nonexistent']);
    expect(r.code).not.toBe(0);
    expect(secure.seen.length).toBe(before);
  });

  it('tunnels other hosts untouched: the client sees the upstream\'s own certificate and the placeholder arrives', async () => {
    const upCaFile = path.join(dataDir, 'upstream-ca.pem');
    fs.writeFileSync(upCaFile, upstreamCaPem);
    const r = await curl(`${other.url}/passthrough`, upCaFile);
    expect(r).toMatchObject({ code: 0, out: 'ok 127.0.0.2\n' });
    const seen = other.seen.find((s) => s.path === '/passthrough')!;
    expect(seen.authorization).toBe(`Bearer ${PLACEHOLDER}`);
    expect(seen.body).toBe(`k=${PLACEHOLDER}`);
    // The proxy's CA does not verify it: it was never terminated.
    const { caFile } = await proxy.ca!.localFiles();
    expect((await curl(`${other.url}/not-ours`, caFile)).code).not.toBe(0);
  });

  it('keeps the same CA across restarts (hands trust it once)', async () => {
    const again = new EgressProxy({ resolveAll: async () => [] }, { dataDir });
    try {
      expect(await again.ca!.certPem()).toBe(await proxy.ca!.certPem());
    } finally {
      await again.close();
    }
  });
});

describe('the egress proxy is no way into the host', () => {
  const ask = (method: 'GET' | 'CONNECT', target: string, auth = true) =>
    new Promise<number>((resolve, reject) => {
      const u = new URL(proxyUrl);
      const headers = auth ? { 'proxy-authorization': `Basic ${Buffer.from(`${u.username}:${u.password}`).toString('base64')}` } : {};
      const req = http.request({ host: '127.0.0.1', port: proxy.port, method, path: target, headers }, (res) => (res.resume(), resolve(res.statusCode!)));
      req.on('connect', (res, socket) => (socket.destroy(), resolve(res.statusCode!)));
      req.on('error', reject);
      req.end();
    });

  it('refuses loopback, link-local and this machine\'s addresses unless a credential names them', async () => {
    const loop = await upstream('127.0.0.4');
    try {
      expect(await ask('GET', `${loop.url}/x`)).toBe(403);
      expect(await ask('CONNECT', `127.0.0.4:${loop.port}`)).toBe(403);
      expect(await ask('GET', `http://localhost:${loop.port}/x`)).toBe(403);
      expect(await ask('GET', `http://[::ffff:127.0.0.4]:${loop.port}/x`)).toBe(403);
      expect(await ask('CONNECT', `[::1]:${loop.port}`)).toBe(403);
      expect(await ask('GET', 'http://169.254.169.254/latest/meta-data/')).toBe(403);
      expect(await ask('GET', `http://0.0.0.0:${loop.port}/x`)).toBe(403);
      expect(loop.seen).toEqual([]);
      // Named explicitly (127.0.0.1 by the credential, the others by the test's allow list): open.
      expect(await ask('GET', `${plain.url}/open`)).toBe(200);
      expect(await ask('CONNECT', `127.0.0.1:${secure.port}`)).toBe(200);
    } finally {
      loop.server.close();
    }
  });

  it('refuses the host\'s own ports even for a host a credential names', async () => {
    const own = await upstream('127.0.0.1');
    try {
      proxy.protect(own.port);
      expect(await ask('GET', `${own.url}/own`)).toBe(403);
      expect(await ask('CONNECT', `127.0.0.1:${own.port}`)).toBe(403);
      expect(await ask('CONNECT', `127.0.0.1:${proxy.port}`)).toBe(403);
      expect(own.seen).toEqual([]);
    } finally {
      own.server.close();
    }
  });

  it('needs the session\'s capability (407)', async () => {
    expect(await ask('GET', `${plain.url}/x`, false)).toBe(407);
    expect(await ask('CONNECT', `127.0.0.1:${secure.port}`, false)).toBe(407);
  });
});

describe('unecho', () => {
  it('finds a value split across chunks, however the stream is cut', async () => {
    const { unecho } = await import('../../main/vault/egress-unecho');
    const text = `a ${VALUE} b ${VALUE}${VALUE} c`;
    for (const size of [1, 3, 7, VALUE.length - 1, VALUE.length, 1000]) {
      const t = unecho([{ value: VALUE, placeholder: 'PH' }]);
      const out: Buffer[] = [];
      t.on('data', (c: Buffer) => out.push(c));
      const done = new Promise((r) => t.on('end', r));
      for (let i = 0; i < text.length; i += size) t.write(Buffer.from(text.slice(i, i + size)));
      t.end();
      await done;
      expect(Buffer.concat(out).toString()).toBe('a PH b PHPH c');
    }
  });
});
