import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RecordedRequest, Reply } from '../fixtures/model-server';
import { startBrainHost, textOf, type BrainTestHost } from '../helpers/brain-host';
import { handsEnv, withBackendTurn } from '../helpers/hands-env';
import { tmpDir } from '../helpers/tmp';
import type { LoggedEvent } from '../../main/session/types';

let t: BrainTestHost;
let ssh: Record<string, string>;
let docker: Record<string, string>;
let adb: Record<string, string>;
let repo: string;
let firstCommit: string;

const gitEnv = { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@t', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@t' };
const git = (...args: string[]) => execFileSync('git', args, { cwd: repo, env: gitEnv, encoding: 'utf8' });

beforeAll(async () => {
  ssh = handsEnv('ssh');
  docker = handsEnv('docker');
  adb = handsEnv('adb');
  process.env.ANDROID_ADB_SERVER_PORT = adb.ANDROID_ADB_SERVER_PORT;
  // A repository on this machine only: the container (network none) and the device cannot reach it.
  repo = path.join(tmpDir(), 'proj');
  fs.mkdirSync(repo);
  git('init', '--quiet', '-b', 'main');
  fs.writeFileSync(path.join(repo, 'README'), 'first\n');
  fs.writeFileSync(path.join(repo, 'run.sh'), '#!/bin/sh\necho ran\n', { mode: 0o755 });
  git('add', '.');
  git('commit', '--quiet', '-m', 'one');
  firstCommit = git('rev-parse', 'HEAD').trim();
  git('checkout', '--quiet', '-b', 'dev');
  fs.writeFileSync(path.join(repo, 'README'), 'on dev\n');
  git('commit', '--quiet', '-am', 'two');
  git('checkout', '--quiet', 'main');
  fs.writeFileSync(path.join(repo, 'README'), 'second on main\n');
  git('commit', '--quiet', '-am', 'three');
  t = await startBrainHost(script);
}, 180_000);
afterAll(() => t?.close());

/** The model runs the command its user message names (`run: …`), then stops. */
function script(req: RecordedRequest): Reply {
  const results = (req.body.messages as { content: { type: string }[] }[]).flatMap((m) => m.content).filter((b) => b.type === 'tool_result').length;
  const command = /run: (.*)$/s.exec(req.body.messages[0].content[0].text)![1]!;
  if (results === 0) return { blocks: [{ type: 'tool_use', name: 'bash', input: { command } }] };
  return { blocks: [{ type: 'text', text: 'looked' }] };
}

const LOOK = 'cat proj/README; ./proj/run.sh; ls -a proj | grep -x .git';

async function sessionWith(config: Record<string, unknown>, resource: Record<string, unknown>, command = LOOK): Promise<LoggedEvent[]> {
  const env = t.host.environments.create({ name: String(config.type), config, metadata: {}, description: null });
  const { session } = t.host.log.createSession({
    environment_id: env.id,
    record: { agent: { model: { id: 'm' }, tools: [{ type: 'agent_toolset_20260401' }] }, resources: [{ id: 'sesrsc_1', type: 'github_repository', mount_path: '/workspace/proj', ...resource }] },
  });
  t.host.log.emitEvent(session.id, { type: 'user.message', content: [{ type: 'text', text: `run: ${command}` }] });
  return t.settled(session.id, 60_000);
}

describe('repositories of a session cloned into its hand', () => {
  it('docker without network: cloned on this machine at a commit, unpacked in the container with history and modes', async () => {
    const events = await sessionWith(
      { type: 'docker', image: docker.CORRAL_TEST_DOCKER_IMAGE, docker_host: docker.CORRAL_TEST_DOCKER_HOST },
      { url: `file://${repo}`, checkout: { type: 'commit', sha: firstCommit } },
    );
    expect(events.find((e) => e.type === 'hand.resource_applied')).toMatchObject({ hand: 'main', path: 'proj', resource_id: 'sesrsc_1', cloned_on: 'this machine' });
    const out = textOf(events.find((e) => e.type === 'agent.tool_result'));
    expect(out).toMatch(/^first\nran\n\.git\n/);
  }, 120_000);

  it('ssh: a branch, and the clone is a working git repository on the host', async () => {
    const events = await withBackendTurn('ssh', () =>
      sessionWith(
        { type: 'ssh', host: ssh.CORRAL_TEST_SSH_HOST, port: Number(ssh.CORRAL_TEST_SSH_PORT), user: ssh.CORRAL_TEST_SSH_USER, identity_file: ssh.CORRAL_TEST_SSH_KEY },
        { url: `file://${repo}`, checkout: { type: 'branch', name: 'dev' } },
        'cat proj/README; git -C proj log --format=%s; git -C proj status --porcelain | wc -l',
      ),
    );
    expect(events.find((e) => e.type === 'hand.resource_applied')).toMatchObject({ cloned_on: 'this machine' });
    const out = textOf(events.find((e) => e.type === 'agent.tool_result'));
    expect(out).toMatch(/^on dev\ntwo\none\n\s*0\n/);
  }, 120_000);

  it('adb: the default branch lands on the device', async () => {
    const events = await withBackendTurn('adb', () =>
      sessionWith({ type: 'adb', serial: adb.CORRAL_TEST_ADB_SERIAL, adb_port: Number(adb.ANDROID_ADB_SERVER_PORT) }, { url: `file://${repo}` }),
    );
    expect(events.find((e) => e.type === 'hand.resource_applied')).toMatchObject({ cloned_on: 'this machine' });
    expect(textOf(events.find((e) => e.type === 'agent.tool_result'))).toMatch(/^second on main\nran\n\.git\n/);
  }, 120_000);

  it('a repository nobody can clone: both attempts are reported, and the hand still serves the session', async () => {
    const events = await sessionWith(
      { type: 'docker', image: docker.CORRAL_TEST_DOCKER_IMAGE, docker_host: docker.CORRAL_TEST_DOCKER_HOST },
      { url: `file://${repo}-missing` },
    );
    const failed = events.find((e) => e.type === 'hand.resource_failed')!;
    expect(failed).toMatchObject({ hand: 'main', path: 'proj' });
    expect(failed.error).toMatch(/cloning on this machine failed: git clone failed \(exit code 128\)/);
    expect(failed.error).toMatch(/cloning on the hand failed too: .*git/s);
    expect(events.find((e) => e.type === 'hand.ready')).toBeDefined();
    const result = events.find((e) => e.type === 'agent.tool_result')!;
    expect(textOf(result)).toMatch(/No such file or directory/);
    expect(events.at(-1)).toMatchObject({ type: 'session.status_idle' });
  }, 120_000);
});
