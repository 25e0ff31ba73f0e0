/**
 * Deleting a session ends what it held: its hands (a container removed, a connection closed, a
 * shell and its background jobs killed) and the folders that were its own (its local work folder,
 * its folder on a shared SSH host). Real hands: local, the private Docker Engine, the loopback sshd.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import Docker from 'dockerode';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createHost, type Host } from '../../main/host';
import { handsEnv, withBackendTurn } from '../helpers/hands-env';
import { tmpDir } from '../helpers/tmp';
import { isRunning } from '../helpers/processes';

let host: Host | undefined;
afterEach(async () => {
  await host?.close();
  host = undefined;
});

/** A host with one session on an environment of `config`; `run` runs bash on its main hand. */
function sessionOn(config: Record<string, unknown>) {
  host = createHost({ dataDir: tmpDir(), workRoot: tmpDir('corral-work-') });
  const h = host;
  const env = h.environments.create({ name: String(config.type), config: config as never, metadata: {}, description: null });
  const { session } = h.log.createSession({ environment_id: env.id, record: { agent: { type: 'agent', id: 'agent_x', version: 1, name: 'x', model: { id: 'm' } }, title: 'delete me', metadata: {}, resources: [], vault_ids: [] } }, []);
  const run = async (command: string) => {
    const r = await h.hands.execute(session.id, undefined, 'bash', { command });
    expect(r.isError).toBe(false);
    return r.content.replace(/\n?\[exit code 0\]$/, '');
  };
  return { h, id: session.id, run };
}

const alive = (pattern: string) => isRunning(pattern);

describe('deleting a session', () => {
  it('local: its shell and background jobs are killed and its work folder removed', async () => {
    const { h, id, run } = sessionOn({ type: 'local' });
    const dir = await run('echo kept > notes.txt; (sleep 47.25 >/dev/null 2>&1 &); pwd');
    expect(dir).toBe(fs.realpathSync(h.hands.workDirOf(id)));
    expect(fs.readFileSync(`${dir}/notes.txt`, 'utf8')).toBe('kept\n');
    await vi.waitFor(() => expect(alive('sleep 47.25')).toBe(true), { timeout: 5_000 });
    h.log.deleteSession(id);
    await vi.waitFor(() => expect(fs.existsSync(dir)).toBe(false), { timeout: 10_000, interval: 50 });
    await vi.waitFor(() => expect(alive('sleep 47.25')).toBe(false), { timeout: 10_000, interval: 50 });
  });

  it('docker: its container is removed', async () => {
    const d = handsEnv('docker');
    const { h, id, run } = sessionOn({ type: 'docker', image: d.CORRAL_TEST_DOCKER_IMAGE, docker_host: d.CORRAL_TEST_DOCKER_HOST });
    const hostname = await run('hostname');
    const docker = new Docker({ socketPath: d.CORRAL_TEST_DOCKER_HOST!.replace(/^unix:\/\//, '') });
    const mine = async () => (await docker.listContainers({ all: true, filters: { label: [`corral.label=${id}/main`] } })).map((c) => c.Id);
    const [cid, ...more] = await mine();
    expect(more).toEqual([]);
    expect(cid!.startsWith(hostname)).toBe(true);
    h.log.deleteSession(id);
    await vi.waitFor(async () => expect(await mine()).toEqual([]), { timeout: 15_000, interval: 100 });
  }, 60_000);

  it("ssh: its folder on the shared host is removed and its connection closed; another session's folder stays", async () => {
    const ssh = handsEnv('ssh');
    const onHost = (command: string) =>
      execFileSync('ssh', ['-i', ssh.CORRAL_TEST_SSH_KEY!, '-p', ssh.CORRAL_TEST_SSH_PORT!, '-o', 'BatchMode=yes', '-o', 'StrictHostKeyChecking=no', '-o', 'UserKnownHostsFile=/dev/null', '-o', 'LogLevel=ERROR', `${ssh.CORRAL_TEST_SSH_USER}@${ssh.CORRAL_TEST_SSH_HOST}`, command], { encoding: 'utf8', timeout: 15_000 });
    await withBackendTurn('ssh', async () => {
      const config = { type: 'ssh', host: ssh.CORRAL_TEST_SSH_HOST, port: Number(ssh.CORRAL_TEST_SSH_PORT), user: ssh.CORRAL_TEST_SSH_USER, identity_file: ssh.CORRAL_TEST_SSH_KEY };
      const { h, id, run } = sessionOn(config);
      const dir = await run('echo kept > notes.txt; (sleep 48.25 >/dev/null 2>&1 &); pwd');
      expect(dir).toMatch(new RegExp(`/${id}$`));
      // A second session on the same host and environment.
      const other = h.log.createSession({ environment_id: h.log.getSession(id).environment_id!, record: { agent: { type: 'agent', id: 'agent_x', version: 1, name: 'x', model: { id: 'm' } }, title: 'keep me', metadata: {}, resources: [], vault_ids: [] } }, []).session.id;
      const otherDir = (await h.hands.execute(other, undefined, 'bash', { command: 'touch mine; pwd' })).content.split('\n')[0]!;
      expect(onHost(`cat ${dir}/notes.txt`)).toBe('kept\n');
      const sleeping = () => onHost('pgrep -f "sleep 48[.]25" >/dev/null && echo running || echo stopped');
      await vi.waitFor(() => expect(sleeping()).toBe('running\n'), { timeout: 5_000, interval: 200 });
      h.log.deleteSession(id);
      await vi.waitFor(() => expect(onHost(`test -e ${dir} && echo there || echo gone`)).toBe('gone\n'), { timeout: 15_000, interval: 200 });
      await vi.waitFor(() => expect(sleeping()).toBe('stopped\n'), { timeout: 15_000, interval: 200 });
      expect(onHost(`test -e ${otherDir}/mine && echo there`)).toBe('there\n');
      await h.hands.release(other, 'main');
      onHost(`rm -rf ${otherDir}`);
    });
  }, 90_000);
});
