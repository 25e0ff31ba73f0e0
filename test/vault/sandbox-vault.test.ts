/**
 * The vault from a sandboxed local hand: `git pull`/`git push` of a repository resource with a
 * git_token, and an environment_variable credential's substitution, through the sandbox gateway
 * (main/vault/sandbox-gateway.ts, main/hands/local/sandbox-relays.ts). The token and the value
 * are nowhere in the sandbox (environment, files, /proc), no proxy capability is either, and
 * another session's sandbox cannot use this one's gateway name.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RecordedRequest, Reply } from '../fixtures/model-server';
import { startGitHttpServer, type GitHttpServer } from '../fixtures/git-http-server';
import { startBrainHost, textOf, type BrainTestHost } from '../helpers/brain-host';
import { tmpDir } from '../helpers/tmp';
import type { LoggedEvent } from '../../main/session/types';
import { sandboxAvailability } from '../../main/hands/local/sandbox';
import { makeCa, makeLeafKey, mintServerCert } from '../../main/vault/x509';

const rand = () => `${Math.random().toString(36).slice(2)}${Math.random().toString(36).slice(2)}`;
const TOKEN = `ghp_sbxtest_${rand()}`;
const VALUE = `sk-sbx-${rand()}`;
/** A secret as a shell word that is not its text (a command holding it would be redacted). */
const word = (v: string) => `'${v.slice(0, 5)}''${v.slice(5)}'`;
const USER = 'corral-bot';
const gitEnv = { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@t', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@t' };

interface Echo {
  url: string;
  seen: { path: string; authorization?: string }[];
  server: http.Server;
}
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

const available = await sandboxAvailability();
let t: BrainTestHost;
let git: GitHttpServer;
let root: string;
let vaultId: string;
let allowed: Echo;
let other: Echo;
let outside: Echo;
let allowedTls: Echo;

beforeAll(async () => {
  if (!available.ok) return;
  root = tmpDir('corral-sbxgit-');
  const work = tmpDir('corral-sbxwork-');
  const g = (cwd: string, ...args: string[]) => execFileSync('git', args, { cwd, env: gitEnv, encoding: 'utf8' });
  g(root, 'init', '--quiet', '--bare', '-b', 'main', 'proj.git');
  g(root, 'init', '--quiet', '--bare', '-b', 'main', 'other.git');
  g(work, 'init', '--quiet', '-b', 'main');
  fs.writeFileSync(path.join(work, 'README'), 'first\n');
  g(work, 'add', '.');
  g(work, 'commit', '--quiet', '-m', 'one');
  g(work, 'push', '--quiet', path.join(root, 'proj.git'), 'main');
  g(work, 'push', '--quiet', path.join(root, 'other.git'), 'main');
  git = await startGitHttpServer(root, USER, TOKEN);
  allowed = await echo('127.0.0.3');
  other = await echo('127.0.0.2');
  outside = await echo('127.0.0.4');
  const upstreamCa = await makeCa('sandbox egress test upstream CA');
  const leaf = await makeLeafKey();
  allowedTls = await echo('127.0.0.3', { key: leaf.keyPem, cert: await mintServerCert(upstreamCa, leaf.spki, '127.0.0.3') });
  // The sandbox on (the default), with the test's upstream CA trusted by the egress proxy.
  t = await startBrainHost(script, { hostOptions: { vault: { egress: { upstreamCa: upstreamCa.certPem } } } });
  await t.host.started;
  const vault = t.host.vault.createVault({ display_name: 'sbx' });
  vaultId = vault.id;
  await t.host.vault.createCredential(vault.id, { display_name: 'proj', auth: { type: 'git_token', token: TOKEN, username: USER, repository_urls: [`${git.url}/proj.git`] } });
  await t.host.vault.createCredential(vault.id, {
    display_name: 'api',
    auth: { type: 'environment_variable', secret_name: 'API_TOKEN', secret_value: VALUE, networking: { type: 'limited', allowed_hosts: ['127.0.0.3'] } },
  });
  // Opens 127.0.0.2 to the proxy (loopback is refused unless a credential names it); its own value is never sent there in this test.
  await t.host.vault.createCredential(vault.id, {
    display_name: 'other',
    auth: { type: 'environment_variable', secret_name: 'OTHER_TOKEN', secret_value: `other-${rand()}`, networking: { type: 'limited', allowed_hosts: ['127.0.0.2'] } },
  });
}, 180_000);
afterAll(async () => {
  await t?.close();
  await git?.close();
  for (const e of [allowed, other, outside, allowedTls]) e?.server.close();
});

function script(req: RecordedRequest): Reply {
  const results = (req.body.messages as { content: { type: string }[] }[]).flatMap((m) => m.content).filter((b) => b.type === 'tool_result').length;
  const command = /run: (.*)$/s.exec(req.body.messages[0].content[0].text)![1]!;
  if (results === 0) return { blocks: [{ type: 'tool_use', name: 'bash', input: { command, timeout_ms: 60_000 } }] };
  return { blocks: [{ type: 'text', text: 'done' }] };
}

async function run(command: string, name: string, withRepo: boolean): Promise<{ events: LoggedEvent[]; out: string }> {
  const env = t.host.environments.create({ name, config: { type: 'local' }, metadata: {}, description: null });
  const { session } = t.host.log.createSession({
    environment_id: env.id,
    record: {
      agent: { model: { id: 'm' }, tools: [{ type: 'agent_toolset_20260401' }] },
      vault_ids: [vaultId],
      ...(withRepo ? { resources: [{ id: 'sesrsc_1', type: 'github_repository', url: `${git.url}/proj.git`, mount_path: '/workspace/proj' }] } : {}),
    },
  });
  t.host.log.emitEvent(session.id, { type: 'user.message', content: [{ type: 'text', text: `run: ${command}` }] });
  const events = await t.settled(session.id, 120_000);
  return { events, out: textOf(events.find((e) => e.type === 'agent.tool_result')) };
}

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
      `GIT_TERMINAL_PROMPT=0 git ls-remote http://127.0.0.1:3141/http/${new URL(git.url).host}/other.git 2>&1 | head -2`,
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
      `curl -s -o /dev/null -w "own: connect=%{http_connect} code=%{http_code}\\n" -p -x "$GRPC_PROXY" "http://$GW:80/http/${new URL(git.url).host}/proj.git/info/refs?service=git-upload-pack"`,
    ].join('\n');
    const { events, out } = await run(command, 'sbx-a', true);
    expect(events.find((e) => e.type === 'hand.ready'), JSON.stringify(events.filter((e) => e.type.startsWith('hand.')))).toMatchObject({ sandbox: { enabled: true } });
    expect(events.find((e) => e.type === 'hand.resource_applied')).toMatchObject({ cloned_on: 'this machine', git_remote: 'git proxy' });
    expect(out, out).toMatch(/^first\n/);
    expect(out).toContain('pushed');
    expect(out).toMatch(/remote: http:\/\/127\.0\.0\.1:3141\/http\/127\.0\.0\.1:\d+\/proj\.git\n/);
    expect(out).toMatch(/403/);
    const log = execFileSync('git', ['--git-dir', path.join(root, 'proj.git'), 'log', '--format=%s', 'main'], { encoding: 'utf8' });
    expect(log).toContain('from sandbox');
    expect(git.requests.filter((r) => r.path.startsWith('/other.git'))).toEqual([]);
    // The egress: the value on the allowed host (HTTP and HTTPS), the placeholder elsewhere, and
    // a host on neither the hand's allow list nor a credential's refused by the proxy.
    expect(out).toMatch(/API_TOKEN=corral_vault_placeholder_vcrd_/);
    expect(allowed.seen.find((s) => s.path === '/allowed')?.authorization).toBe(`Bearer ${VALUE}`);
    expect(allowedTls.seen.find((s) => s.path === '/allowed-tls')?.authorization).toBe(`Bearer ${VALUE}`);
    expect(other.seen.find((s) => s.path === '/other')?.authorization).toMatch(/^Bearer corral_vault_placeholder_vcrd_/);
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
    const before = git.requests.length;
    const through = `http://${gatewayName}:80/http/${new URL(git.url).host}/proj.git/info/refs?service=git-upload-pack`;
    // GRPC_PROXY is still the runtime's own proxy (with this sandbox's credentials); the hand's HTTP_PROXY is the egress relay.
    const { out } = await run(`curl -s -o /dev/null -w "connect=%{http_connect}\\n" -p -x "$GRPC_PROXY" "${through}"; echo "exit=$?"`, 'sbx-b', false);
    expect(out).toMatch(/connect=403/);
    expect(git.requests.length).toBe(before);
  }, 180_000);
});
