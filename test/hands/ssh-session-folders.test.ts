import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RecordedRequest, Reply } from '../fixtures/model-server';
import { startBrainHost, textOf, type BrainTestHost } from '../helpers/brain-host';
import { handsEnv, withBackendTurn } from '../helpers/hands-env';
import { tmpDir } from '../helpers/tmp';
import type { LoggedEvent } from '../../main/session/types';

/**
 * SSH hands without a working_dir, on the real sshd of test/hands-env/ssh.sh: two sessions on
 * one host get folders of their own (~/corral-work/<session id>), so the second session's
 * repository is no longer unpacked over the first one's; a session's hand provisioned again
 * (after a host restart) finds its own folder, with what the session left in it, its clone kept.
 */

let t: BrainTestHost;
let ssh: Record<string, string>;
const repos: Record<'a' | 'b', string> = { a: '', b: '' };
// A mount name no other test uses: on the shared host, folders outlive test runs.
const MOUNT = `loose-proj-${process.pid}-${Date.now().toString(36)}`;
const made: string[] = [];

const gitEnv = { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@t', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@t' };

function onHost(command: string): string {
  return execFileSync(
    'ssh',
    ['-i', ssh.CORRAL_TEST_SSH_KEY!, '-p', ssh.CORRAL_TEST_SSH_PORT!, '-o', 'BatchMode=yes', '-o', 'StrictHostKeyChecking=no', '-o', 'UserKnownHostsFile=/dev/null', '-o', 'LogLevel=ERROR', `${ssh.CORRAL_TEST_SSH_USER}@${ssh.CORRAL_TEST_SSH_HOST}`, command],
    { encoding: 'utf8', timeout: 15_000 },
  );
}

/** The model runs what the newest user message names (`run: …`), then stops. */
function script(req: RecordedRequest): Reply {
  const msgs = req.body.messages as { role: string; content: string | { type: string; text?: string }[] }[];
  const last = msgs.at(-1)!;
  const blocks = typeof last.content === 'string' ? [{ type: 'text', text: last.content }] : last.content;
  const run = blocks.map((b) => /^run: (.*)$/s.exec(b.text ?? '')?.[1]).find(Boolean);
  if (last.role === 'user' && run) return { blocks: [{ type: 'tool_use', name: 'bash', input: { command: run } }] };
  return { blocks: [{ type: 'text', text: 'done' }] };
}

beforeAll(async () => {
  ssh = handsEnv('ssh');
  for (const name of ['a', 'b'] as const) {
    const dir = path.join(tmpDir(), `repo-${name}`);
    fs.mkdirSync(dir);
    const git = (...args: string[]) => execFileSync('git', args, { cwd: dir, env: gitEnv });
    git('init', '--quiet', '-b', 'main');
    fs.writeFileSync(path.join(dir, 'README'), `repository ${name.toUpperCase()}\n`);
    git('add', '.');
    git('commit', '--quiet', '-m', name);
    repos[name] = dir;
  }
  t = await startBrainHost(script);
}, 180_000);
afterAll(async () => {
  await t?.close();
  // Leave the shared host as found: this file's folders only.
  if (ssh) onHost(['rm -rf --', ...[MOUNT, ...made].map((m) => `"$HOME/corral-work/${m}"`)].join(' '));
});

const LOOK = `pwd; cat ${MOUNT}/README`;

function newSession(envId: string, repo: string, command: string): string {
  const { session } = t.host.log.createSession({
    environment_id: envId,
    record: {
      agent: { model: { id: 'm' }, tools: [{ type: 'agent_toolset_20260401' }] },
      resources: [{ id: 'sesrsc_1', type: 'github_repository', url: `file://${repo}`, mount_path: `/workspace/${MOUNT}` }],
    },
  });
  made.push(session.id);
  t.host.log.emitEvent(session.id, { type: 'user.message', content: [{ type: 'text', text: `run: ${command}` }] });
  return session.id;
}

const results = (events: LoggedEvent[]) => events.filter((e) => e.type === 'agent.tool_result').map(textOf);

describe('ssh hands without working_dir', () => {
  it('give each session its own folder with its own clone, and the same folder when provisioned again', async () => {
    await withBackendTurn('ssh', async () => {
      const home = onHost('printf %s "$HOME"');
      const env = t.host.environments.create({
        name: 'shared-host',
        config: { type: 'ssh', host: ssh.CORRAL_TEST_SSH_HOST, port: Number(ssh.CORRAL_TEST_SSH_PORT), user: ssh.CORRAL_TEST_SSH_USER, identity_file: ssh.CORRAL_TEST_SSH_KEY },
        metadata: {},
        description: null,
      });
      const first = newSession(env.id, repos.a, `${LOOK}; echo mine > ${MOUNT}/note; echo edited >> ${MOUNT}/README`);
      const firstEvents = await t.settled(first, 60_000);
      expect(results(firstEvents)[0]).toBe(`${home}/corral-work/${first}\nrepository A\n[exit code 0]`);

      const second = newSession(env.id, repos.b, LOOK);
      const secondEvents = await t.settled(second, 60_000);
      // Before: the same ~/corral-work, where A's clone was "kept" for B's session.
      expect(secondEvents.find((e) => e.type === 'hand.resource_applied')).toMatchObject({ cloned_on: 'this machine', path: MOUNT });
      expect(results(secondEvents)[0]).toBe(`${home}/corral-work/${second}\nrepository B\n[exit code 0]`);

      // A restart drops every hand: the first session's next call provisions a fresh one, in its
      // own folder again, where its clone (and the file it left there) is kept.
      await t.stopHost();
      await t.restartHost();
      const before = t.events(first).length;
      t.host.log.emitEvent(first, { type: 'user.message', content: [{ type: 'text', text: `run: ${LOOK}; cat ${MOUNT}/note` }] });
      const again = (await t.settled(first, 60_000)).slice(before);
      // Kept as the session left it, not unpacked over (as a clone through the vault's git proxy
      // is: test/vault/restart.test.ts): its edit of a tracked file and its new file are there.
      expect(again.find((e) => e.type === 'hand.resource_applied')).toMatchObject({ path: MOUNT, cloned_on: 'an earlier provisioning (kept as it was)' });
      expect(results(again)[0]).toBe(`${home}/corral-work/${first}\nrepository A\nedited\nmine\n[exit code 0]`);
    });
  }, 180_000);
});
