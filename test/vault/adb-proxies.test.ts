/**
 * The vault's proxies from an Android device (adb hand): a repository with a git_token is cloned
 * at provisioning and its origin on the device points at the host's git proxy through adb reverse
 * forwarding; `git pull` and `git push` work from the device; an environment_variable credential
 * is substituted by the egress proxy (reached the same way) only for its allowed host. The real
 * adb server (a private one, test/helpers/adb-private.ts) and the test device, which runs its
 * commands on this machine: the device's whole root folder is searched for the secrets afterwards.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPrivateAdb, type PrivateAdb, type PrivateDevice } from '../helpers/adb-private';
import { addEnvVariable, addGitToken, commitSubjects, makeUpstreamCa, openLoopbackHost, plantedSecret, runInSession, serveRepos, shellWord as word, startEcho, startVaultHost, type CommandRun, type EchoServer, type ServedRepos, type VaultHost } from '../helpers/vault-fixtures';

const run = promisify(execFile);
const TOKEN = plantedSecret('ghp_corraltest_');
const API_VALUE = plantedSecret('sk-live-');

let adb: PrivateAdb;
let dev: PrivateDevice;
let oldWifi: PrivateDevice;
let vault: VaultHost;
let repos: ServedRepos;
let apiCred: string;
let allowed: EchoServer;
let other: EchoServer;
let allowedTls: EchoServer;

beforeAll(async () => {
  adb = await startPrivateAdb(15074);
  dev = await adb.device(6574);
  oldWifi = await adb.device(6575, ['--reverse', 'old-wifi']);
  repos = await serveRepos(TOKEN, { prefix: 'corral-adb-' });
  allowed = await startEcho('127.0.0.1');
  other = await startEcho('127.0.0.2');
  // HTTPS: the egress proxy terminates TLS for the allowed host with the host's CA, which the
  // device must trust (placed at provisioning, hands/hand-env.ts); upstream it trusts this test's CA.
  const upstreamCa = await makeUpstreamCa('adb egress test upstream CA');
  allowedTls = await startEcho('127.0.0.1', await upstreamCa.tlsFor('127.0.0.1'));
  vault = await startVaultHost('adb', { sandbox: false, vault: { egress: { upstreamCa: upstreamCa.certPem } } });
  await addGitToken(vault, TOKEN, `${repos.git.url}/proj.git`);
  apiCred = await addEnvVariable(vault, { display_name: 'api', name: 'API_TOKEN', value: API_VALUE, hosts: ['127.0.0.1'] });
  await openLoopbackHost(vault, '127.0.0.2');
}, 180_000);
afterAll(async () => {
  await vault?.t.close();
  await repos?.git.close();
  for (const e of [allowed, other, allowedTls]) e?.server.close();
  await adb?.close();
});

const session = (d: PrivateDevice, command: string): Promise<CommandRun> =>
  runInSession(vault, { name: `adb-${d.serial}`, config: { type: 'adb', serial: d.serial, adb_port: adb.port, working_dir: d.workDir }, command, repoUrl: `${repos.git.url}/proj.git` });

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
    expect(await commitSubjects(repos.root)).toContain('from adb');
    expect(repos.git.requests.filter((r) => r.authorization).length).toBeGreaterThan(0);
    // Nothing the device holds, and nothing in the log, has either secret.
    for (const v of [TOKEN, API_VALUE]) {
      expect(await filesHolding(dev.root, v)).toBe('');
      expect(JSON.stringify(events)).not.toContain(v);
    }
    expect(events.filter((e) => e.type === 'vault.credential_used').map((e) => e.purpose)).toEqual(expect.arrayContaining(['git', 'egress']));
    // Both addresses are the device's reverse forwards, each to a port of the host; released, they go with the hand.
    const listed = (await adb.cli(['-s', dev.serial, 'reverse', '--list'])).stdout;
    for (const p of [remote![1], proxy![1]]) expect(listed, listed).toMatch(new RegExp(`^\\(reverse\\) tcp:${p} tcp:(?!${p}\\b)\\d+$`, 'm'));
    await vault.t.host.hands.release(id, 'main');
    expect((await adb.cli(['-s', dev.serial, 'reverse', '--list'])).stdout.trim()).toBe('');
    expect(adb.alive()).toBe(true);
  }, 180_000);

  it('a device that cannot reverse-forward: says why, keeps the checkout with the repository\'s own remote, and still runs commands', async () => {
    const { events, out } = await session(oldWifi, 'echo "proxy=[$HTTP_PROXY]"; echo "API_TOKEN=$API_TOKEN"; cat proj/README; git -C proj remote get-url origin');
    const why = /device 127\.0\.0\.1:6575 cannot do adb reverse forwarding over Wi-Fi/;
    expect(events.find((e) => e.type === 'hand.resource_applied')).toMatchObject({ cloned_on: 'this machine', git_remote: expect.stringMatching(/^direct \(the hand cannot reach the git proxy: device 127\.0\.0\.1:6575 cannot do adb reverse forwarding over Wi-Fi/) });
    expect(events.find((e) => e.type === 'hand.ready')).toMatchObject({ reverse_forwarding: { ok: false, error: expect.stringMatching(why) } });
    // No proxy to reach: the placeholder only, and the repository's own URL (no token) as origin.
    expect(out.startsWith(`proxy=[]\nAPI_TOKEN=corral_vault_placeholder_${apiCred}\nfirst\n${repos.git.url}/proj.git\n`), out).toBe(true);
    for (const v of [TOKEN, API_VALUE]) expect(await filesHolding(oldWifi.root, v)).toBe('');
  }, 180_000);
});
