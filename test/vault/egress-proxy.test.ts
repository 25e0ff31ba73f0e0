import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { handsEnv, withBackendTurn } from '../helpers/hands-env';
import { addEnvVariable, makeUpstreamCa, openLoopbackHost, plantedSecret, runInSession, shellWord as word, startEcho, startVaultHost, type CommandRun, type EchoServer, type VaultHost } from '../helpers/vault-fixtures';
import type { LoggedEvent } from '../../main/session/types';

const HEADER_VALUE = plantedSecret('sk-live-');
const BODY_VALUE = plantedSecret('body-secret-');

let vault: VaultHost;
let allowed: EchoServer;
let other: EchoServer;
let allowedTls: EchoServer;
let otherTls: EchoServer;
let headerCred: string;
let ssh: Record<string, string>;
let docker: Record<string, string>;
let podman: Record<string, string>;

beforeAll(async () => {
  ssh = handsEnv('ssh');
  docker = handsEnv('docker');
  podman = handsEnv('podman');
  allowed = await startEcho('127.0.0.1');
  other = await startEcho('127.0.0.2');
  // HTTPS upstreams with certificates of a CA only this test (and, by option, the host's egress proxy) trusts.
  const upstreamCa = await makeUpstreamCa('egress test upstream CA');
  allowedTls = await startEcho('127.0.0.1', await upstreamCa.tlsFor('127.0.0.1'));
  otherTls = await startEcho('127.0.0.2', await upstreamCa.tlsFor('127.0.0.2'));
  vault = await startVaultHost('apis', { sandbox: false, vault: { egress: { upstreamCa: upstreamCa.certPem } } });
  headerCred = await addEnvVariable(vault, { display_name: 'api', name: 'API_TOKEN', value: HEADER_VALUE, hosts: ['127.0.0.1'] });
  await addEnvVariable(vault, { display_name: 'form', name: 'FORM_SECRET', value: BODY_VALUE, hosts: ['127.0.0.1'], injection_location: { body: true, header: false } });
  // Opens 127.0.0.2 (the "other" servers); no request there holds that credential's placeholder.
  await openLoopbackHost(vault, '127.0.0.2');
}, 180_000);
afterAll(async () => {
  await vault?.t.close();
  for (const e of [allowed, other, allowedTls, otherTls]) e?.server.close();
});

/** `get URL PATH` with an Authorization header and a form body, by curl or busybox wget. */
const commandFor = (client: 'curl' | 'wget', who: string) => {
  const send = (base: string, path: string) =>
    client === 'curl'
      ? `curl -s -H "Authorization: Bearer $API_TOKEN" --data "k=$FORM_SECRET" ${base}/${path}`
      : `wget -q -O - --header "Authorization: Bearer $API_TOKEN" --post-data "k=$FORM_SECRET" ${base}/${path}`;
  return [
    'echo "API_TOKEN=$API_TOKEN"',
    'echo "FORM_SECRET=$FORM_SECRET"',
    send(allowed.url, `allowed-${who}`),
    send(other.url, `other-${who}`),
    send(allowedTls.url, `allowed-tls-${who}`),
    send(otherTls.url, `other-tls-${who}`),
    `if env | grep -qF ${word(HEADER_VALUE)} || env | grep -qF ${word(BODY_VALUE)}; then echo leak-env; else echo clean-env; fi`,
  ].join('\n');
};

const run = (config: Record<string, unknown>, client: 'curl' | 'wget', who: string): Promise<CommandRun> =>
  runInSession(vault, { name: who, config, command: commandFor(client, who) });

function expectSubstituted(events: LoggedEvent[], out: string, who: string): void {
  const placeholder = `corral_vault_placeholder_${headerCred}`;
  // The hand sees placeholders only.
  expect(out).toContain(`API_TOKEN=${placeholder}`);
  expect(out).toMatch(/FORM_SECRET=corral_vault_placeholder_vcrd_/);
  expect(out).toContain('ok 127.0.0.1');
  expect(out).toContain('ok 127.0.0.2');
  expect(out).toContain('clean-env');
  // The allowed host got the values (the header one in the header, the body one in the body).
  const a = allowed.seen.find((s) => s.path === `/allowed-${who}`)!;
  expect(a.authorization).toBe(`Bearer ${HEADER_VALUE}`);
  expect(a.body).toBe(`k=${BODY_VALUE}`);
  // Another address got the placeholders as the hand sent them.
  const o = other.seen.find((s) => s.path === `/other-${who}`)!;
  expect(o.authorization).toBe(`Bearer ${placeholder}`);
  expect(o.body).toMatch(/^k=corral_vault_placeholder_vcrd_/);
  // The same over HTTPS: the hand trusts the host's CA (SSL_CERT_FILE and friends), the proxy
  // terminates TLS for the allowed host and substitutes there, and no value goes elsewhere.
  const at = allowedTls.seen.find((s) => s.path === `/allowed-tls-${who}`)!;
  expect(at.authorization).toBe(`Bearer ${HEADER_VALUE}`);
  expect(at.body).toBe(`k=${BODY_VALUE}`);
  const ot = otherTls.seen.find((s) => s.path === `/other-tls-${who}`)!;
  expect(ot.authorization).toBe(`Bearer ${placeholder}`);
  expect(ot.body).toMatch(/^k=corral_vault_placeholder_vcrd_/);
  expect(out.match(/ok 127\.0\.0\.1/g), out).toHaveLength(2);
  const log = JSON.stringify(events);
  expect(log).not.toContain(HEADER_VALUE);
  expect(log).not.toContain(BODY_VALUE);
  const used = events.filter((e) => e.type === 'vault.credential_used');
  expect(used.map((e) => e.purpose)).toEqual(['egress', 'egress', 'egress', 'egress']);
  expect(used[2]!.target).toBe(`${String(used[2]!.target).split(' ')[0]} ${allowedTls.url}`);
  expect(used[0]).toMatchObject({ kind: 'environment_variable' });
  // The method as the client sent it (busybox wget says GET even with --post-data), then the origin.
  expect(used[0]!.target).toBe(`${String(used[0]!.target).split(' ')[0]} ${allowed.url}`);
}

describe('environment_variable credentials: placeholders on the hand, values added by the egress proxy on allowed hosts', () => {
  it('ssh hand (curl), the proxy through remote port forwarding', async () => {
    const { events, out } = await withBackendTurn('ssh', () =>
      run({ type: 'ssh', host: ssh.CORRAL_TEST_SSH_HOST, port: Number(ssh.CORRAL_TEST_SSH_PORT), user: ssh.CORRAL_TEST_SSH_USER, identity_file: ssh.CORRAL_TEST_SSH_KEY }, 'curl', 'ssh'),
    );
    expectSubstituted(events, out, 'ssh');
  }, 180_000);

  it('container hand on the host network (busybox wget)', async () => {
    const { events, out } = await run({ type: 'docker', image: docker.CORRAL_TEST_DOCKER_IMAGE, docker_host: docker.CORRAL_TEST_DOCKER_HOST, network: 'host' }, 'wget', 'docker');
    expectSubstituted(events, out, 'docker');
  }, 180_000);

  it('container on a bridge network (Podman\'s): the proxy through a forwarder on the gateway address', async () => {
    const { events, out } = await run({ type: 'docker', image: podman.CORRAL_TEST_PODMAN_IMAGE, docker_host: podman.CORRAL_TEST_PODMAN_HOST, network: 'bridge' }, 'wget', 'bridge');
    expectSubstituted(events, out, 'bridge');
    // The hand reached the proxy at its gateway, not at loopback (a bridge container's loopback is its own).
    expect(out).not.toContain('wget: can\'t connect');
  }, 180_000);

  it('local hand without the sandbox (curl)', async () => {
    const { events, out } = await run({ type: 'local', sandbox: false }, 'curl', 'local');
    expectSubstituted(events, out, 'local');
  }, 180_000);
});

describe('the egress proxy itself', () => {
  it('needs the session\'s capability (407), never forwards to the host\'s own servers (403), and tunnels CONNECT untouched', async () => {
    const { EgressProxy } = await import('../../main/vault/egress-proxy');
    // 127.0.0.2's echo server opened by name (loopback is refused otherwise).
    const proxy = new EgressProxy({ resolveAll: async () => [] }, { allowLocal: [new URL(other.url).host] });
    await proxy.listening;
    try {
      proxy.protect(Number(new URL(allowed.url).port));
      const url = new URL(await proxy.proxyUrl('sesn_x', { host: '127.0.0.1', port: proxy.port! }));
      const auth = `Basic ${Buffer.from(`${url.username}:${url.password}`).toString('base64')}`;
      const ask = (headers: Record<string, string>, target: string) =>
        new Promise<number>((resolve, reject) => {
          const req = http.request({ host: '127.0.0.1', port: proxy.port, path: target, headers }, (res) => (res.resume(), resolve(res.statusCode!)));
          req.on('error', reject);
          req.end();
        });
      expect(await ask({}, `${other.url}/x`)).toBe(407);
      expect(await ask({ 'proxy-authorization': 'Basic ' + Buffer.from('corral:corral-egress-guess').toString('base64') }, `${other.url}/x`)).toBe(407);
      expect(await ask({ 'proxy-authorization': auth }, `${allowed.url}/own`)).toBe(403);
      expect(allowed.seen.find((s) => s.path === '/own')).toBeUndefined();
      expect(await ask({ 'proxy-authorization': auth }, `${other.url}/through`)).toBe(200);
      // CONNECT: a raw tunnel to the other server, an HTTP request inside it.
      const got = await new Promise<string>((resolve, reject) => {
        const req = http.request({ host: '127.0.0.1', port: proxy.port, method: 'CONNECT', path: new URL(other.url).host, headers: { 'proxy-authorization': auth } });
        req.on('connect', (res, socket) => {
          expect(res.statusCode).toBe(200);
          socket.write(`GET /tunnel HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer corral_vault_placeholder_x\r\nConnection: close\r\n\r\n`);
          let text = '';
          socket.on('data', (c: Buffer) => (text += c.toString()));
          socket.on('end', () => resolve(text));
        });
        req.on('error', reject);
        req.end();
      });
      expect(got).toContain('ok 127.0.0.2');
      expect(other.seen.find((s) => s.path === '/tunnel')!.authorization).toBe('Bearer corral_vault_placeholder_x');
    } finally {
      await proxy.close();
    }
  });
});
