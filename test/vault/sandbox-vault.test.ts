/**
 * The vault from a sandboxed local hand: `git pull`/`git push` of a repository resource with a
 * git_token, and an environment_variable credential's substitution, through the sandbox gateway
 * (main/vault/sandbox-gateway.ts, main/hands/local/sandbox-relays.ts). The token and the value
 * are nowhere in the sandbox (environment, files, /proc), no proxy capability is either, and
 * another session's sandbox cannot use this one's gateway name.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sandboxAvailability } from '../../main/hands/local/sandbox';
import { addEnvVariable, addGitToken, commitSubjects, makeUpstreamCa, openLoopbackHost, plantedSecret, runInSession, serveRepos, shellWord as word, startEcho, startVaultHost, type CommandRun, type EchoServer, type ServedRepos, type VaultHost } from '../helpers/vault-fixtures';

const TOKEN = plantedSecret('ghp_sbxtest_');
const VALUE = plantedSecret('sk-sbx-');

const available = await sandboxAvailability();
let vault: VaultHost;
let repos: ServedRepos;
let allowed: EchoServer;
let other: EchoServer;
let outside: EchoServer;
let allowedTls: EchoServer;

beforeAll(async () => {
  if (!available.ok) return;
  repos = await serveRepos(TOKEN, { prefix: 'corral-sbx-', repos: ['proj.git', 'other.git'] });
  allowed = await startEcho('127.0.0.3');
  other = await startEcho('127.0.0.2');
  outside = await startEcho('127.0.0.4');
  const upstreamCa = await makeUpstreamCa('sandbox egress test upstream CA');
  allowedTls = await startEcho('127.0.0.3', await upstreamCa.tlsFor('127.0.0.3'));
  // The sandbox on (the default), with the test's upstream CA trusted by the egress proxy.
  vault = await startVaultHost('sbx', { vault: { egress: { upstreamCa: upstreamCa.certPem } } });
  await addGitToken(vault, TOKEN, `${repos.git.url}/proj.git`);
  await addEnvVariable(vault, { display_name: 'api', name: 'API_TOKEN', value: VALUE, hosts: ['127.0.0.3'] });
  await openLoopbackHost(vault, '127.0.0.2');
}, 180_000);
afterAll(async () => {
  await vault?.t.close();
  await repos?.git.close();
  for (const e of [allowed, other, outside, allowedTls]) e?.server.close();
});

const run = (command: string, name: string, withRepo: boolean): Promise<CommandRun> =>
  runInSession(vault, { name, config: { type: 'local' }, command, ...(withRepo ? { repoUrl: `${repos.git.url}/proj.git` } : {}) });

const send = (base: string, p: string) => `curl -sS -H "Authorization: Bearer $API_TOKEN" ${base}/${p}; echo`;
/** Searches for a planted form: any hit prints `leak-<where>`. */
const search = (label: string, needle: string) =>
  [
    `N=${needle}`,
    `if grep -rqaF -- "$N" . "$TMPDIR" 2>/dev/null; then echo leak-files-${label}; grep -rlaF -- "$N" . "$TMPDIR"; else echo clean-files-${label}; fi`,
    `if env | grep -qaF -- "$N"; then echo leak-env-${label}; else echo clean-env-${label}; fi`,
    // The needle from a file descriptor, not grep's arguments (its own cmdline would match).
    `if cat /proc/[0-9]*/environ /proc/[0-9]*/cmdline 2>/dev/null | grep -qaF -f <(printf '%s\\n' "$N"); then echo leak-proc-${label}; else echo clean-proc-${label}; fi`,
  ].join('\n');

let gatewayName = '';

describe.skipIf(!available.ok)('the vault from a sandboxed local hand', () => {
  it('git pull and push through the sandbox gateway; environment_variable substituted on allowed hosts only; no secret and no capability inside', async () => {
    const command = [
      'cd proj',
      'git pull --quiet origin main && cat README',
      'echo from-sbx > f.txt && git add . && git -c user.name=h -c user.email=h@h commit --quiet -m "from sandbox" && git push --quiet origin HEAD:main && echo pushed',
      'echo "remote: $(git remote get-url origin)"',
      `GIT_TERMINAL_PROMPT=0 git ls-remote http://127.0.0.1:3141/http/${new URL(repos.git.url).host}/other.git 2>&1 | head -2`,
      'echo "API_TOKEN=$API_TOKEN"',
      send(allowed.url, 'allowed'),
      send(other.url, 'other'),
      `curl -s -o /dev/null -w "outside=%{http_code}\\n" ${outside.url}/outside`,
      send(allowedTls.url, 'allowed-tls'),
      // Off the hand's allow list (the package registries by default) and no credential's: refused before any lookup.
      'curl -s http://off-list.example.invalid/x',
      search('token', word(TOKEN)),
      search('value', word(VALUE)),
      search('cap', "'corral-''git-'"),
      search('ecap', "'corral-''egress-'"),
      'GW=$(cat /proc/[0-9]*/cmdline 2>/dev/null | tr "\\0" " " | grep -ao "[0-9a-f]\\{32\\}\\.vault\\.corral\\.invalid" | head -1); echo "gw: $GW"',
      // The control for the next test: through the runtime's proxy to its own gateway name, this sandbox gets through.
      `curl -s -o /dev/null -w "own: connect=%{http_connect} code=%{http_code}\\n" -p -x "$GRPC_PROXY" "http://$GW:80/http/${new URL(repos.git.url).host}/proj.git/info/refs?service=git-upload-pack"`,
    ].join('\n');
    const { events, out } = await run(command, 'sbx-a', true);
    expect(events.find((e) => e.type === 'hand.ready'), JSON.stringify(events.filter((e) => e.type.startsWith('hand.')))).toMatchObject({ sandbox: { enabled: true } });
    expect(events.find((e) => e.type === 'hand.resource_applied')).toMatchObject({ cloned_on: 'this machine', git_remote: 'git proxy' });
    expect(out, out).toMatch(/^first\n/);
    expect(out).toContain('pushed');
    expect(out).toMatch(/remote: http:\/\/127\.0\.0\.1:3141\/http\/127\.0\.0\.1:\d+\/proj\.git\n/);
    expect(out).toMatch(/403/);
    expect(await commitSubjects(repos.root)).toContain('from sandbox');
    expect(repos.git.requests.filter((r) => r.path.startsWith('/other.git'))).toEqual([]);
    // The egress: the value on the allowed host (HTTP and HTTPS), the placeholder elsewhere, and
    // a host on neither the hand's allow list nor a credential's refused by the proxy.
    expect(out).toMatch(/API_TOKEN=corral_vault_placeholder_vcrd_/);
    expect(allowed.seen.find((s) => s.path === '/allowed')?.authorization, out).toBe(`Bearer ${VALUE}`);
    expect(allowedTls.seen.find((s) => s.path === '/allowed-tls')?.authorization, out).toBe(`Bearer ${VALUE}`);
    expect(other.seen.find((s) => s.path === '/other')?.authorization, out).toMatch(/^Bearer corral_vault_placeholder_vcrd_/);
    expect(out).toContain('outside=403');
    expect(outside.seen).toEqual([]);
    expect(out).toContain("off-list.example.invalid:80 is not on this hand's network allow list");
    for (const label of ['token', 'value', 'cap', 'ecap']) for (const where of ['files', 'env', 'proc']) expect(out).toContain(`clean-${where}-${label}`);
    expect(JSON.stringify(events)).not.toContain(TOKEN);
    expect(JSON.stringify(events)).not.toContain(VALUE);
    const used = events.filter((e) => e.type === 'vault.credential_used');
    expect(used.filter((e) => e.purpose === 'git').length).toBeGreaterThanOrEqual(3);
    expect(used.filter((e) => e.purpose === 'egress').length).toBe(2);
    expect(out).toContain('own: connect=200 code=200');
    gatewayName = /gw: ([0-9a-f]{32}\.vault\.corral\.invalid)/.exec(out)?.[1] ?? '';
    expect(gatewayName).not.toBe('');
  }, 180_000);

  it("another session's sandbox cannot use that session's gateway name (the runtime refuses it)", async () => {
    // Its gateway name comes from the test before: without it this test would fail for that one's reason.
    expect(gatewayName, 'the test before found no gateway name').not.toBe('');
    const before = repos.git.requests.length;
    const through = `http://${gatewayName}:80/http/${new URL(repos.git.url).host}/proj.git/info/refs?service=git-upload-pack`;
    // GRPC_PROXY is still the runtime's own proxy (with this sandbox's credentials); the hand's HTTP_PROXY is the egress relay.
    const { out } = await run(`curl -s -o /dev/null -w "connect=%{http_connect}\\n" -p -x "$GRPC_PROXY" "${through}"; echo "exit=$?"`, 'sbx-b', false);
    expect(out).toMatch(/connect=403/);
    expect(repos.git.requests.length).toBe(before);
  }, 180_000);
});
