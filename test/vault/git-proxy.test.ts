import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RecordedRequest, Reply } from '../fixtures/model-server';
import { startGitHttpServer, type GitHttpServer } from '../fixtures/git-http-server';
import { startBrainHost, textOf, type BrainTestHost } from '../helpers/brain-host';
import { handsEnv, withBackendTurn } from '../helpers/hands-env';
import { tmpDir } from '../helpers/tmp';
import type { LoggedEvent } from '../../main/session/types';

const TOKEN = `ghp_corraltest_${Math.random().toString(36).slice(2)}${Math.random().toString(36).slice(2)}`;
/** The token as a shell word that is not the token's text (the command itself must not contain it, or it would be redacted). */
const TOKEN_WORD = `'${TOKEN.slice(0, 6)}''${TOKEN.slice(6)}'`;
const USER = 'corral-bot';

let t: BrainTestHost;
let git: GitHttpServer;
let root: string;
let vaultId: string;
let ssh: Record<string, string>;
let docker: Record<string, string>;
let gitImage: string;
const gitEnv = { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@t', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@t' };

beforeAll(async () => {
  ssh = handsEnv('ssh');
  docker = handsEnv('docker');
  gitImage = execFileSync('bash', [path.join(__dirname, '../hands-env/git-image.sh')], { env: { ...process.env, DOCKER_HOST: docker.CORRAL_TEST_DOCKER_HOST }, encoding: 'utf8' }).trim();
  root = tmpDir('corral-gitroot-');
  const work = tmpDir('corral-gitwork-');
  const g = (cwd: string, ...args: string[]) => execFileSync('git', args, { cwd, env: gitEnv, encoding: 'utf8' });
  g(root, 'init', '--quiet', '--bare', '-b', 'main', 'proj.git');
  g(root, 'init', '--quiet', '--bare', '-b', 'main', 'other.git');
  g(work, 'init', '--quiet', '-b', 'main');
  fs.writeFileSync(path.join(work, 'README'), 'first\n');
  g(work, 'add', '.');
  g(work, 'commit', '--quiet', '-m', 'one');
  g(work, 'push', '--quiet', path.join(root, 'proj.git'), 'main');
  g(work, 'push', '--quiet', path.join(root, 'other.git'), 'main');
  // The hands (and the clones) must be able to push to a bare repository's checked-out branch: it is bare, so fine.
  git = await startGitHttpServer(root, USER, TOKEN);
  t = await startBrainHost(script, { hostOptions: { sandbox: false } });
  await t.host.started;
  const vault = t.host.vault.createVault({ display_name: 'repos' });
  vaultId = vault.id;
  await t.host.vault.createCredential(vault.id, { display_name: 'proj', auth: { type: 'git_token', token: TOKEN, username: USER, repository_urls: [`${git.url}/proj.git`] } });
}, 180_000);
afterAll(async () => {
  await t?.close();
  await git?.close();
});

/** The model runs the command its user message names (`run: …`), then stops. */
function script(req: RecordedRequest): Reply {
  const results = (req.body.messages as { content: { type: string }[] }[]).flatMap((m) => m.content).filter((b) => b.type === 'tool_result').length;
  const command = /run: (.*)$/s.exec(req.body.messages[0].content[0].text)![1]!;
  if (results === 0) return { blocks: [{ type: 'tool_use', name: 'bash', input: { command, timeout_ms: 60_000 } }] };
  return { blocks: [{ type: 'text', text: 'done' }] };
}

/** Pulls, commits, pushes, tries the proxy for another repository, and looks for the token everywhere it can. */
const handCommand = (who: string) =>
  [
    'cd proj',
    'git pull --quiet origin main && cat README',
    `echo from-${who} > from-${who}.txt && git add . && git -c user.name=h -c user.email=h@h commit --quiet -m "from ${who}" && git push --quiet origin HEAD:main && echo pushed`,
    'echo "remote: $(git remote get-url origin | sed -E "s#/corral-git-[^/]+/#/CAP/#")"',
    // The proxy for another repository of the same server: refused.
    "base=$(git remote get-url origin | sed -E 's#/proj(\\.git)?$##')",
    'GIT_TERMINAL_PROMPT=0 git ls-remote "$base/other.git" 2>&1 | head -2',
    `T=${TOKEN_WORD}`,
    'if grep -rqF "$T" . ; then echo leak-files; else echo clean-files; fi',
    'if env | grep -qF "$T"; then echo leak-env; else echo clean-env; fi',
    'if ps -ef 2>/dev/null | grep -v grep | grep -qF "$T"; then echo leak-ps; else echo clean-ps; fi',
    'if grep -qF "$T" .git/config; then echo leak-config; else echo clean-config; fi',
    // The SSH test user's folder is shared with other tests that clone into `proj`.
    'cd .. && rm -rf proj',
  ].join('\n');

async function run(config: Record<string, unknown>, who: string): Promise<{ events: LoggedEvent[]; out: string }> {
  const env = t.host.environments.create({ name: who, config, metadata: {}, description: null });
  const { session } = t.host.log.createSession({
    environment_id: env.id,
    record: {
      agent: { model: { id: 'm' }, tools: [{ type: 'agent_toolset_20260401' }] },
      vault_ids: [vaultId],
      resources: [{ id: 'sesrsc_1', type: 'github_repository', url: `${git.url}/proj.git`, mount_path: '/workspace/proj' }],
    },
  });
  t.host.log.emitEvent(session.id, { type: 'user.message', content: [{ type: 'text', text: `run: ${handCommand(who)}` }] });
  const events = await t.settled(session.id, 120_000);
  return { events, out: textOf(events.find((e) => e.type === 'agent.tool_result')) };
}

function expectGood(events: LoggedEvent[], out: string, who: string): void {
  expect(events.find((e) => e.type === 'hand.resource_applied'), JSON.stringify(events.filter((e) => e.type.startsWith('hand.')))).toMatchObject({ cloned_on: 'this machine', git_remote: 'git proxy' });
  expect(out).toMatch(/^first\n/);
  expect(out).toContain('pushed');
  expect(out).toMatch(/remote: http:\/\/127\.0\.0\.1:\d+\/CAP\/http\/127\.0\.0\.1:\d+\/proj/);
  expect(out).toMatch(/403/);
  for (const place of ['files', 'env', 'ps', 'config']) expect(out).toContain(`clean-${place}`);
  // The push arrived.
  const log = execFileSync('git', ['--git-dir', path.join(root, 'proj.git'), 'log', '--format=%s', 'main'], { encoding: 'utf8' });
  expect(log).toContain(`from ${who}`);
  // Nothing in the log holds the token; the ledger names the repository.
  expect(JSON.stringify(events)).not.toContain(TOKEN);
  const used = events.filter((e) => e.type === 'vault.credential_used');
  expect(used.length).toBeGreaterThanOrEqual(3); // the clone, the pull, the push
  expect(used[0]).toMatchObject({ purpose: 'git', kind: 'git_token', target: `${git.url}/proj.git` });
}

describe('git through the host: a repository with a git_token in the session\'s vault', () => {
  it('local hand (loopback): clone at provisioning, pull and push from the hand; the token is nowhere on it', async () => {
    const { events, out } = await run({ type: 'local', sandbox: false }, 'local');
    expectGood(events, out, 'local');
  }, 180_000);

  it('ssh hand: the proxy through remote port forwarding on the SSH connection', async () => {
    const { events, out } = await withBackendTurn('ssh', () =>
      run({ type: 'ssh', host: ssh.CORRAL_TEST_SSH_HOST, port: Number(ssh.CORRAL_TEST_SSH_PORT), user: ssh.CORRAL_TEST_SSH_USER, identity_file: ssh.CORRAL_TEST_SSH_KEY }, 'ssh'),
    );
    expectGood(events, out, 'ssh');
  }, 180_000);

  it('container hand on the host network: the proxy on loopback', async () => {
    const { events, out } = await run({ type: 'docker', image: gitImage, docker_host: docker.CORRAL_TEST_DOCKER_HOST, network: 'host' }, 'docker');
    expectGood(events, out, 'docker');
  }, 180_000);

  it('the token reached the server only from the proxy, and never for another repository', () => {
    const withAuth = git.requests.filter((r) => r.authorization);
    expect(withAuth.length).toBeGreaterThan(0);
    expect(git.requests.filter((r) => r.path.startsWith('/other.git'))).toEqual([]);
  });

  it('a container without network: cloned with the proxy, its remote is the repository itself (no token, no route)', async () => {
    const { events } = await run({ type: 'docker', image: gitImage, docker_host: docker.CORRAL_TEST_DOCKER_HOST }, 'docker-none');
    expect(events.find((e) => e.type === 'hand.resource_applied')).toMatchObject({ git_remote: 'direct (the hand cannot reach the git proxy)' });
  }, 180_000);
});
