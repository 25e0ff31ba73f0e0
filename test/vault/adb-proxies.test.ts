/**
 * The vault's proxies from an Android device (adb hand): a repository with a git_token is cloned
 * at provisioning and its origin on the device points at the host's git proxy through adb reverse
 * forwarding; `git pull` and `git push` work from the device; an environment_variable credential
 * is substituted by the egress proxy (reached the same way) only for its allowed host. The real
 * adb server (a private one, test/helpers/adb-private.ts) and the test device, which runs its
 * commands on this machine: the device's whole root folder is searched for the secrets afterwards.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RecordedRequest, Reply } from '../fixtures/model-server';
import { startGitHttpServer, type GitHttpServer } from '../fixtures/git-http-server';
import { startPrivateAdb, type PrivateAdb, type PrivateDevice } from '../helpers/adb-private';
import { startBrainHost, textOf, type BrainTestHost } from '../helpers/brain-host';
import { tmpDir } from '../helpers/tmp';
import type { LoggedEvent } from '../../main/session/types';
import { makeCa, makeLeafKey, mintServerCert } from '../../main/vault/x509';

const run = promisify(execFile);
const rnd = () => Math.random().toString(36).slice(2);
const TOKEN = `ghp_corraltest_${rnd()}${rnd()}`;
const API_VALUE = `sk-live-${rnd()}${rnd()}`;
/** A value as a shell word that is not the value's text (a command holding it would be redacted). */
const word = (v: string) => `'${v.slice(0, 6)}''${v.slice(6)}'`;
const USER = 'corral-bot';
const gitEnv = { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@t', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@t' };

interface Echo {
  url: string;
  seen: { path: string; authorization?: string }[];
  server: http.Server;
}
/** An echo server; HTTPS with a certificate of the test's own upstream CA when `tls` is given. */
async function echo(host: string, tls?: { key: string; cert: string }): Promise<Echo> {
  const seen: Echo['seen'] = [];
  const server = (tls ? https.createServer.bind(null, tls) : http.createServer)((req, res) => {
    seen.push({ path: req.url ?? '', authorization: req.headers.authorization });
    req.resume();
    req.on('end', () => res.end(`ok ${host}\n`));
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  return { url: `${tls ? 'https' : 'http'}://${host}:${(server.address() as AddressInfo).port}`, seen, server };
}

let adb: PrivateAdb;
let dev: PrivateDevice;
let oldWifi: PrivateDevice;
let t: BrainTestHost;
let git: GitHttpServer;
let root: string;
let vaultId: string;
let apiCred: string;
let allowed: Echo;
let other: Echo;
let allowedTls: Echo;

beforeAll(async () => {
  adb = await startPrivateAdb(15074);
  dev = await adb.device(6574);
  oldWifi = await adb.device(6575, ['--reverse', 'old-wifi']);
  root = tmpDir('corral-adb-gitroot-');
  const work = tmpDir('corral-adb-gitwork-');
  const g = (cwd: string, ...args: string[]) => run('git', args, { cwd, env: gitEnv });
  await g(root, 'init', '--quiet', '--bare', '-b', 'main', 'proj.git');
  await g(work, 'init', '--quiet', '-b', 'main');
  fs.writeFileSync(path.join(work, 'README'), 'first\n');
  await g(work, 'add', '.');
  await g(work, 'commit', '--quiet', '-m', 'one');
  await g(work, 'push', '--quiet', path.join(root, 'proj.git'), 'main');
  git = await startGitHttpServer(root, USER, TOKEN);
  allowed = await echo('127.0.0.1');
  other = await echo('127.0.0.2');
  // HTTPS: the egress proxy terminates TLS for the allowed host with the host's CA, which the
  // device must trust (placed at provisioning, hands/hand-env.ts); upstream it trusts this test's CA.
  const upstreamCa = await makeCa('adb egress test upstream CA');
  const leaf = await makeLeafKey();
  allowedTls = await echo('127.0.0.1', { key: leaf.keyPem, cert: await mintServerCert(upstreamCa, leaf.spki, '127.0.0.1') });
  t = await startBrainHost(script, { hostOptions: { sandbox: false, vault: { egress: { upstreamCa: upstreamCa.certPem } } } });
  await t.host.started;
  const vault = t.host.vault.createVault({ display_name: 'adb' });
  vaultId = vault.id;
  await t.host.vault.createCredential(vault.id, { display_name: 'proj', auth: { type: 'git_token', token: TOKEN, username: USER, repository_urls: [`${git.url}/proj.git`] } });
  apiCred = (
    await t.host.vault.createCredential(vault.id, {
      display_name: 'api',
      auth: { type: 'environment_variable', secret_name: 'API_TOKEN', secret_value: API_VALUE, networking: { type: 'limited', allowed_hosts: ['127.0.0.1'] } },
    })
  ).id;
  // Opens 127.0.0.2 to the egress proxy (loopback is refused unless a credential names it).
  await t.host.vault.createCredential(vault.id, {
    display_name: 'other',
    auth: { type: 'environment_variable', secret_name: 'OTHER_TOKEN', secret_value: `other-${rnd()}`, networking: { type: 'limited', allowed_hosts: ['127.0.0.2'] } },
  });
}, 180_000);
afterAll(async () => {
  await t?.close();
  await git?.close();
  for (const e of [allowed, other, allowedTls]) e?.server.close();
  await adb?.close();
});

function script(req: RecordedRequest): Reply {
  const results = (req.body.messages as { content: { type: string }[] }[]).flatMap((m) => m.content).filter((b) => b.type === 'tool_result').length;
  const command = /run: (.*)$/s.exec(req.body.messages[0].content[0].text)![1]!;
  if (results === 0) return { blocks: [{ type: 'tool_use', name: 'bash', input: { command, timeout_ms: 60_000 } }] };
  return { blocks: [{ type: 'text', text: 'done' }] };
}

async function session(d: PrivateDevice, command: string): Promise<{ id: string; events: LoggedEvent[]; out: string }> {
  const env = t.host.environments.create({ name: `adb-${d.serial}`, config: { type: 'adb', serial: d.serial, adb_port: adb.port, working_dir: d.workDir }, metadata: {}, description: null });
  const { session } = t.host.log.createSession({
    environment_id: env.id,
    record: {
      agent: { model: { id: 'm' }, tools: [{ type: 'agent_toolset_20260401' }] },
      vault_ids: [vaultId],
      resources: [{ id: 'sesrsc_1', type: 'github_repository', url: `${git.url}/proj.git`, mount_path: '/workspace/proj' }],
    },
  });
  t.host.log.emitEvent(session.id, { type: 'user.message', content: [{ type: 'text', text: `run: ${command}` }] });
  const events = await t.settled(session.id, 120_000);
  return { id: session.id, events, out: textOf(events.find((e) => e.type === 'agent.tool_result')) };
}

/** Every file under `dir` that holds `value` (grep exits 1 when none does). */
async function filesHolding(dir: string, value: string): Promise<string> {
  const r = await run('grep', ['-rlF', '--', value, dir]).catch((e: { code?: number; stdout?: string }) => ({ stdout: e.code === 1 ? '' : `grep failed: ${e.code}` }));
  return r.stdout;
}

const onDevice = [
  'cd proj',
  'git pull --quiet origin main && cat README',
  'echo from-adb > from-adb.txt && git add . && git -c user.name=h -c user.email=h@h commit --quiet -m "from adb" && git push --quiet origin HEAD:main && echo pushed',
  'echo "remote: $(git remote get-url origin | sed -E "s#/corral-git-[^/]+/#/CAP/#")"',
  'echo "proxy: $(echo "$HTTP_PROXY" | sed -E "s#//[^@]*@#//CAP@#")"',
  'echo "API_TOKEN=$API_TOKEN"',
  // (Variables set, not exported by this test: the hand exports them.)
  'curl -s -H "Authorization: Bearer $API_TOKEN" "$ALLOWED/allowed-adb"',
  'curl -s -H "Authorization: Bearer $API_TOKEN" "$OTHER/other-adb"',
  'curl -s -H "Authorization: Bearer $API_TOKEN" "$ALLOWED_TLS/allowed-tls-adb"',
  `T=${word(TOKEN)}; V=${word(API_VALUE)}`,
  'if grep -rqF "$T" . || grep -rqF "$V" .; then echo leak-files; else echo clean-files; fi',
  'if env | grep -qF "$T" || env | grep -qF "$V"; then echo leak-env; else echo clean-env; fi',
  'if grep -qF "$T" .git/config; then echo leak-config; else echo clean-config; fi',
].join('\n');

describe('the host\'s git and egress proxies from an adb hand, through adb reverse forwarding', () => {
  it('clones at provisioning; pull and push from the device; the allowed host gets the value, another the placeholder; no secret on the device', async () => {
    const { id, events, out } = await session(dev, `ALLOWED=${allowed.url}; OTHER=${other.url}; ALLOWED_TLS=${allowedTls.url}\n${onDevice}`);
    const hand = JSON.stringify(events.filter((e) => e.type.startsWith('hand.')));
    expect(events.find((e) => e.type === 'hand.resource_applied'), hand).toMatchObject({ cloned_on: 'this machine', git_remote: 'git proxy' });
    expect(events.find((e) => e.type === 'hand.ready'), hand).toMatchObject({ kind: 'adb', reverse_forwarding: { ok: true, forwards: 2 } });
    expect(out).toMatch(/^first\n/);
    expect(out).toContain('pushed');
    // Both proxies at ports on the device's loopback, neither of them the host's own port.
    const remote = /remote: http:\/\/127\.0\.0\.1:(\d+)\/CAP\/http\/127\.0\.0\.1:\d+\/proj/.exec(out);
    const proxy = /proxy: http:\/\/CAP@127\.0\.0\.1:(\d+)\n/.exec(out);
    expect(remote, out).not.toBeNull();
    expect(proxy, out).not.toBeNull();
    expect(out).toContain(`API_TOKEN=corral_vault_placeholder_${apiCred}`);
    expect(out.match(/ok 127\.0\.0\.1/g), out).toHaveLength(2);
    expect(out).toContain('ok 127.0.0.2');
    for (const place of ['files', 'env', 'config']) expect(out).toContain(`clean-${place}`);
    expect(allowed.seen.find((s) => s.path === '/allowed-adb')!.authorization).toBe(`Bearer ${API_VALUE}`);
    expect(allowedTls.seen.find((s) => s.path === '/allowed-tls-adb')!.authorization).toBe(`Bearer ${API_VALUE}`);
    expect(other.seen.find((s) => s.path === '/other-adb')!.authorization).toBe(`Bearer corral_vault_placeholder_${apiCred}`);
    // The push arrived, with the token added by the proxy only.
    const log = (await run('git', ['--git-dir', path.join(root, 'proj.git'), 'log', '--format=%s', 'main'])).stdout;
    expect(log).toContain('from adb');
    expect(git.requests.filter((r) => r.authorization).length).toBeGreaterThan(0);
    // Nothing the device holds, and nothing in the log, has either secret.
    for (const v of [TOKEN, API_VALUE]) {
      expect(await filesHolding(dev.root, v)).toBe('');
      expect(JSON.stringify(events)).not.toContain(v);
    }
    expect(events.filter((e) => e.type === 'vault.credential_used').map((e) => e.purpose)).toEqual(expect.arrayContaining(['git', 'egress']));
    // Both addresses are the device's reverse forwards, each to a port of the host; released, they go with the hand.
    const listed = (await adb.cli(['-s', dev.serial, 'reverse', '--list'])).stdout;
    for (const p of [remote![1], proxy![1]]) expect(listed, listed).toMatch(new RegExp(`^\\(reverse\\) tcp:${p} tcp:(?!${p}\\b)\\d+$`, 'm'));
    await t.host.hands.release(id, 'main');
    expect((await adb.cli(['-s', dev.serial, 'reverse', '--list'])).stdout.trim()).toBe('');
    expect(adb.alive()).toBe(true);
  }, 180_000);

  it('a device that cannot reverse-forward: says why, keeps the checkout with the repository\'s own remote, and still runs commands', async () => {
    const { events, out } = await session(oldWifi, 'echo "proxy=[$HTTP_PROXY]"; echo "API_TOKEN=$API_TOKEN"; cat proj/README; git -C proj remote get-url origin');
    const why = /device 127\.0\.0\.1:6575 cannot do adb reverse forwarding over Wi-Fi/;
    expect(events.find((e) => e.type === 'hand.resource_applied')).toMatchObject({ cloned_on: 'this machine', git_remote: expect.stringMatching(/^direct \(the hand cannot reach the git proxy: device 127\.0\.0\.1:6575 cannot do adb reverse forwarding over Wi-Fi/) });
    expect(events.find((e) => e.type === 'hand.ready')).toMatchObject({ reverse_forwarding: { ok: false, error: expect.stringMatching(why) } });
    // No proxy to reach: the placeholder only, and the repository's own URL (no token) as origin.
    expect(out.startsWith(`proxy=[]\nAPI_TOKEN=corral_vault_placeholder_${apiCred}\nfirst\n${git.url}/proj.git\n`), out).toBe(true);
    for (const v of [TOKEN, API_VALUE]) expect(await filesHolding(oldWifi.root, v)).toBe('');
  }, 180_000);
});
