import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RecordedRequest, Reply } from '../fixtures/model-server';
import { startBrainHost, textOf, type BrainTestHost } from '../helpers/brain-host';
import { handsEnv, withBackendTurn } from '../helpers/hands-env';
import type { LoggedEvent } from '../../main/session/types';
import { makeCa, makeLeafKey, mintServerCert } from '../../main/vault/x509';

const HEADER_VALUE = `sk-live-${Math.random().toString(36).slice(2)}${Math.random().toString(36).slice(2)}`;
const BODY_VALUE = `body-secret-${Math.random().toString(36).slice(2)}${Math.random().toString(36).slice(2)}`;
/** A value as a shell word that is not the value's text (a command holding it would be redacted). */
const word = (v: string) => `'${v.slice(0, 5)}''${v.slice(5)}'`;

interface Seen {
  path: string;
  authorization?: string;
  body: string;
}
interface Echo {
  url: string;
  seen: Seen[];
  server: http.Server;
}

/** An echo server; HTTPS with a certificate from the test's own upstream CA when `tls` is given. */
async function echo(host: string, tls?: { key: string; cert: string }): Promise<Echo> {
  const seen: Seen[] = [];
  const server = (tls ? https.createServer.bind(null, tls) : http.createServer)((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => {
      seen.push({ path: req.url ?? '', authorization: req.headers.authorization, body: Buffer.concat(parts).toString('utf8') });
      res.end(`ok ${host}\n`);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  return { url: `${tls ? 'https' : 'http'}://${host}:${(server.address() as AddressInfo).port}`, seen, server };
}

let t: BrainTestHost;
let allowed: Echo;
let other: Echo;
let allowedTls: Echo;
let otherTls: Echo;
let vaultId: string;
let headerCred: string;
let ssh: Record<string, string>;
let docker: Record<string, string>;
let podman: Record<string, string>;

beforeAll(async () => {
  ssh = handsEnv('ssh');
  docker = handsEnv('docker');
  podman = handsEnv('podman');
  allowed = await echo('127.0.0.1');
  other = await echo('127.0.0.2');
  // HTTPS upstreams with certificates of a CA only this test (and, by option, the host's egress proxy) trusts.
  const upstreamCa = await makeCa('egress test upstream CA');
  const leaf = await makeLeafKey();
  allowedTls = await echo('127.0.0.1', { key: leaf.keyPem, cert: await mintServerCert(upstreamCa, leaf.spki, '127.0.0.1') });
  otherTls = await echo('127.0.0.2', { key: leaf.keyPem, cert: await mintServerCert(upstreamCa, leaf.spki, '127.0.0.2') });
  t = await startBrainHost(script, { hostOptions: { sandbox: false, vault: { egress: { upstreamCa: upstreamCa.certPem } } } });
  await t.host.started;
  const vault = t.host.vault.createVault({ display_name: 'apis' });
  vaultId = vault.id;
  headerCred = (
    await t.host.vault.createCredential(vault.id, {
      display_name: 'api',
      auth: { type: 'environment_variable', secret_name: 'API_TOKEN', secret_value: HEADER_VALUE, networking: { type: 'limited', allowed_hosts: ['127.0.0.1'] } },
    })
  ).id;
  await t.host.vault.createCredential(vault.id, {
    display_name: 'form',
    auth: {
      type: 'environment_variable',
      secret_name: 'FORM_SECRET',
      secret_value: BODY_VALUE,
      networking: { type: 'limited', allowed_hosts: ['127.0.0.1'] },
      injection_location: { body: true, header: false },
    },
  });
  // The egress proxy reaches loopback only where a credential names the address: this one opens
  // 127.0.0.2 (the "other" servers) without its placeholder ever being in the requests there.
  await t.host.vault.createCredential(vault.id, {
    display_name: 'other',
    auth: { type: 'environment_variable', secret_name: 'OTHER_TOKEN', secret_value: 'other-value', networking: { type: 'limited', allowed_hosts: ['127.0.0.2'] } },
  });
}, 180_000);
afterAll(async () => {
  await t?.close();
  for (const e of [allowed, other, allowedTls, otherTls]) e?.server.close();
});

function script(req: RecordedRequest): Reply {
  const results = (req.body.messages as { content: { type: string }[] }[]).flatMap((m) => m.content).filter((b) => b.type === 'tool_result').length;
  const command = /run: (.*)$/s.exec(req.body.messages[0].content[0].text)![1]!;
  if (results === 0) return { blocks: [{ type: 'tool_use', name: 'bash', input: { command, timeout_ms: 60_000 } }] };
  return { blocks: [{ type: 'text', text: 'done' }] };
}

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

async function run(config: Record<string, unknown>, client: 'curl' | 'wget', who: string): Promise<{ events: LoggedEvent[]; out: string }> {
  const env = t.host.environments.create({ name: who, config, metadata: {}, description: null });
  const { session } = t.host.log.createSession({
    environment_id: env.id,
    record: { agent: { model: { id: 'm' }, tools: [{ type: 'agent_toolset_20260401' }] }, vault_ids: [vaultId] },
  });
  t.host.log.emitEvent(session.id, { type: 'user.message', content: [{ type: 'text', text: `run: ${commandFor(client, who)}` }] });
  const events = await t.settled(session.id, 120_000);
  return { events, out: textOf(events.find((e) => e.type === 'agent.tool_result')) };
}

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
