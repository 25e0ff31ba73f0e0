import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { handsEnv, withBackendTurn } from '../helpers/hands-env';
import { addGitToken, commitSubjects, plantedSecret, runInSession, serveRepos, shellWord, startVaultHost, type CommandRun, type ServedRepos, type VaultHost } from '../helpers/vault-fixtures';
import type { LoggedEvent } from '../../main/session/types';

const TOKEN = plantedSecret('ghp_corraltest_');

let vault: VaultHost;
let repos: ServedRepos;
let ssh: Record<string, string>;
let docker: Record<string, string>;
let gitImage: string;

beforeAll(async () => {
  ssh = handsEnv('ssh');
  docker = handsEnv('docker');
  gitImage = execFileSync('bash', [path.join(__dirname, '../hands-env/git-image.sh')], { env: { ...process.env, DOCKER_HOST: docker.CORRAL_TEST_DOCKER_HOST }, encoding: 'utf8' }).trim();
  // The hands (and the clones) must be able to push to a bare repository's checked-out branch: it is bare, so fine.
  repos = await serveRepos(TOKEN, { prefix: 'corral-gitproxy-', repos: ['proj.git', 'other.git'] });
  vault = await startVaultHost('repos', { sandbox: false });
  await addGitToken(vault, TOKEN, `${repos.git.url}/proj.git`);
}, 180_000);
afterAll(async () => {
  await vault?.t.close();
  await repos?.git.close();
});

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
    `T=${shellWord(TOKEN)}`,
    'if grep -rqF "$T" . ; then echo leak-files; else echo clean-files; fi',
    'if env | grep -qF "$T"; then echo leak-env; else echo clean-env; fi',
    'if ps -ef 2>/dev/null | grep -v grep | grep -qF "$T"; then echo leak-ps; else echo clean-ps; fi',
    'if grep -qF "$T" .git/config; then echo leak-config; else echo clean-config; fi',
    // The SSH test user's folder is shared with other tests that clone into `proj`.
    'cd .. && rm -rf proj',
  ].join('\n');

const run = (config: Record<string, unknown>, who: string): Promise<CommandRun> =>
  runInSession(vault, { name: who, config, command: handCommand(who), repoUrl: `${repos.git.url}/proj.git` });

async function expectGood(events: LoggedEvent[], out: string, who: string): Promise<void> {
  expect(events.find((e) => e.type === 'hand.resource_applied'), JSON.stringify(events.filter((e) => e.type.startsWith('hand.')))).toMatchObject({ cloned_on: 'this machine', git_remote: 'git proxy' });
  expect(out).toMatch(/^first\n/);
  expect(out).toContain('pushed');
  expect(out).toMatch(/remote: http:\/\/127\.0\.0\.1:\d+\/CAP\/http\/127\.0\.0\.1:\d+\/proj/);
  expect(out).toMatch(/403/);
  for (const place of ['files', 'env', 'ps', 'config']) expect(out).toContain(`clean-${place}`);
  // The push arrived.
  expect(await commitSubjects(repos.root)).toContain(`from ${who}`);
  // Nothing in the log holds the token; the ledger names the repository.
  expect(JSON.stringify(events)).not.toContain(TOKEN);
  const used = events.filter((e) => e.type === 'vault.credential_used');
  expect(used.length).toBeGreaterThanOrEqual(3); // the clone, the pull, the push
  expect(used[0]).toMatchObject({ purpose: 'git', kind: 'git_token', target: `${repos.git.url}/proj.git` });
}

describe('git through the host: a repository with a git_token in the session\'s vault', () => {
  it('local hand (loopback): clone at provisioning, pull and push from the hand; the token is nowhere on it', async () => {
    const { events, out } = await run({ type: 'local', sandbox: false }, 'local');
    await expectGood(events, out, 'local');
  }, 180_000);

  it('ssh hand: the proxy through remote port forwarding on the SSH connection', async () => {
    const { events, out } = await withBackendTurn('ssh', () =>
      run({ type: 'ssh', host: ssh.CORRAL_TEST_SSH_HOST, port: Number(ssh.CORRAL_TEST_SSH_PORT), user: ssh.CORRAL_TEST_SSH_USER, identity_file: ssh.CORRAL_TEST_SSH_KEY }, 'ssh'),
    );
    await expectGood(events, out, 'ssh');
  }, 180_000);

  it('container hand on the host network: the proxy on loopback', async () => {
    const { events, out } = await run({ type: 'docker', image: gitImage, docker_host: docker.CORRAL_TEST_DOCKER_HOST, network: 'host' }, 'docker');
    await expectGood(events, out, 'docker');
  }, 180_000);

  it('the token reached the server only from the proxy, and never for another repository', () => {
    const withAuth = repos.git.requests.filter((r) => r.authorization);
    expect(withAuth.length).toBeGreaterThan(0);
    expect(repos.git.requests.filter((r) => r.path.startsWith('/other.git'))).toEqual([]);
  });

  it('a container without network: cloned with the proxy, its remote is the repository itself (no token, no route)', async () => {
    const { events } = await run({ type: 'docker', image: gitImage, docker_host: docker.CORRAL_TEST_DOCKER_HOST }, 'docker-none');
    expect(events.find((e) => e.type === 'hand.resource_applied')).toMatchObject({ git_remote: 'direct (the hand cannot reach the git proxy)' });
  }, 180_000);
});
