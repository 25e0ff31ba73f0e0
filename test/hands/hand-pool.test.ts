/**
 * The warm pool of hands (hand-pool.ts) on the real docker and ssh test backends: hands made
 * ahead are given to one session each, with the repository the environment's sessions want
 * already on them, show in the log (hand.taken_from_pool, hand.ready from_pool) and in the
 * pool's state, are not returned after use, and nothing of the pool is left after shutdown.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import Docker from 'dockerode';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hostCalls } from '../../main/api/ui/calls';
import type { UiEnvironment } from '../../main/api/ui/contract';
import { createHost, type Host } from '../../main/host';
import { onFirstCalls } from '../../main/hands/first-calls';
import { sshHandKind } from '../../main/hands/ssh';
import type { LoggedEvent } from '../../main/session/types';
import { handsEnv, withBackendTurn } from '../helpers/hands-env';
import { tmpDir } from '../helpers/tmp';

let host: Host;
let docker: Record<string, string>;
let ssh: Record<string, string>;
let repoUrl: string;
let dockerEnv: string;
let sshEnv: string;
const LABEL_DOCKER = `pool-docker-${process.pid}`;
const LABEL_SSH = `ssh-${process.pid}`;

const sshConfig = () => ({ type: 'ssh', host: ssh.CORRAL_TEST_SSH_HOST, port: Number(ssh.CORRAL_TEST_SSH_PORT), user: ssh.CORRAL_TEST_SSH_USER, identity_file: ssh.CORRAL_TEST_SSH_KEY });
const engine = () => new Docker({ socketPath: docker.CORRAL_TEST_DOCKER_HOST!.replace(/^unix:\/\//, '') });
/** Containers the pool of this test made (named after the pool's label). */
const poolContainers = async () => (await engine().listContainers({ all: true, filters: { label: [`corral.label=pool-${LABEL_DOCKER}`] } })).length;

async function until(ok: () => boolean | Promise<boolean>, what: string, ms = 90_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await ok())) {
    if (Date.now() > deadline) throw new Error(`waited ${ms} ms for ${what}: ${JSON.stringify(host.hands.pool.state())}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
const readyOf = (env: string) => host.hands.pool.state().find((s) => s.environment_id === env)?.ready ?? 0;

function session(env: string, repo: boolean): string {
  const { session } = host.log.createSession({
    environment_id: env,
    record: { agent: { model: { id: 'm' }, tools: [{ type: 'agent_toolset_20260401' }] }, resources: repo ? [{ type: 'github_repository', url: repoUrl, mount_path: '/workspace/repo' }] : [] },
  });
  return session.id;
}
const events = (id: string): LoggedEvent[] => host.log.getEvents(id, { from: 1, limit: 1000 });

beforeAll(async () => {
  docker = handsEnv('docker');
  ssh = handsEnv('ssh');
  const src = path.join(tmpDir(), 'proj');
  fs.mkdirSync(src);
  const env = { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@t', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@t' };
  fs.writeFileSync(path.join(src, 'README'), 'pooled\n');
  for (const args of [['init', '--quiet', '-b', 'main'], ['add', '.'], ['commit', '--quiet', '-m', 'one']]) execFileSync('git', args, { cwd: src, env });
  repoUrl = `file://${src}`;
  host = createHost({ dataDir: tmpDir(), workRoot: tmpDir('corral-work-'), handPool: { [LABEL_DOCKER]: 2, [LABEL_SSH]: 1 } });
  await host.started;
  dockerEnv = host.environments.create({ name: LABEL_DOCKER, config: { type: 'docker', image: docker.CORRAL_TEST_DOCKER_IMAGE, docker_host: docker.CORRAL_TEST_DOCKER_HOST } as never, metadata: {}, description: null }).id;
  sshEnv = host.environments.create({ name: LABEL_SSH, config: sshConfig() as never, metadata: {}, description: null }).id;
}, 180_000);
let closed = false;
afterAll(() => (closed ? undefined : host?.close()));

describe('a warm pool of hands', () => {
  it('docker: made ahead, each given to one session, shown in the log, and not returned after use', async () => {
    host.hands.pool.fill();
    await until(() => readyOf(dockerEnv) === 2, 'two pooled docker hands');
    expect(await poolContainers()).toBe(2);
    const [a, b] = [session(dockerEnv, false), session(dockerEnv, false)];
    const [ra, rb] = await Promise.all([a, b].map((id) => host.hands.execute(id, undefined, 'bash', { command: 'echo $$ > /tmp/mine; hostname' })));
    expect(ra!.isError).toBe(false);
    const takenA = events(a).find((e) => e.type === 'hand.taken_from_pool');
    const takenB = events(b).find((e) => e.type === 'hand.taken_from_pool');
    expect(takenA).toMatchObject({ hand: 'main', kind: 'docker', environment_id: dockerEnv });
    expect(takenB).toBeDefined();
    // Never given to two sessions: two hands, two containers.
    expect(takenA!.pool_hand_id).not.toBe(takenB!.pool_hand_id);
    expect(ra!.content).not.toBe(rb!.content);
    expect(events(a).find((e) => e.type === 'hand.ready')).toMatchObject({ from_pool: true });
    // A pooled hand is taken before connecting: no 'connecting' step for it.
    expect(events(a).some((e) => e.type === 'hand.provisioning_progress' && e.phase === 'connecting')).toBe(false);
    expect(host.hands.pool.state().find((s) => s.environment_id === dockerEnv)).toMatchObject({ taken: 2 });
    // The window's environments list shows the pool.
    const listed = (await hostCalls(host).listEnvironments({})) as UiEnvironment[];
    expect(listed.find((e) => e.id === dockerEnv)?.corral_pool).toMatchObject({ size: 2, taken: 2 });
    expect(listed.find((e) => e.id === sshEnv)?.corral_pool).toMatchObject({ size: 1 });
    // Refilled in the background; the used hands are gone when released, never back in the pool.
    await until(() => readyOf(dockerEnv) === 2, 'the pool refilled');
    await host.hands.release(a, 'main');
    await host.hands.release(b, 'main');
    expect(await poolContainers()).toBe(2);
    const c = session(dockerEnv, false);
    const rc = await host.hands.execute(c, undefined, 'bash', { command: 'cat /tmp/mine 2>/dev/null || echo fresh' });
    expect(rc.content).toMatch(/^fresh\n/);
    await host.hands.release(c, 'main');
  }, 180_000);

  it('a pooled hand\'s first bash call runs in a shell started ahead, not one it waits for', async () => {
    await until(() => readyOf(dockerEnv) === 2, 'the pool refilled');
    await new Promise((r) => setTimeout(r, 2000));
    const d = session(dockerEnv, false);
    // Its first call holds work that can wait (a brain started ahead) while it runs; later calls do not.
    const told: boolean[] = [];
    const off = onFirstCalls((busy) => told.push(busy));
    // The shell's age from its start time in /proc (clock ticks since boot) and the uptime now.
    const age = await host.hands.execute(d, undefined, 'bash', { command: `awk -v s="$(cut -d' ' -f22 /proc/$$/stat)" -v hz="$(getconf CLK_TCK 2>/dev/null || echo 100)" '{ printf "age=%d\\n", ($1 - s / hz) * 1000 }' /proc/uptime` });
    expect(age.isError).toBe(false);
    expect(events(d).some((e) => e.type === 'hand.taken_from_pool')).toBe(true);
    expect(Number(/age=(\d+)/.exec(age.content)?.[1])).toBeGreaterThanOrEqual(1500);
    expect(told).toEqual([true, false]);
    // And it is the session's shell: its folder and state carry to the next call.
    const next = await host.hands.execute(d, undefined, 'bash', { command: 'export KEPT=yes; cd /tmp' });
    expect(next.isError).toBe(false);
    expect((await host.hands.execute(d, undefined, 'bash', { command: 'echo "$KEPT $(pwd)"' })).content).toMatch(/^yes \/tmp/);
    off();
    expect(told).toEqual([true, false]);
    await host.hands.release(d, 'main');
  }, 180_000);

  it('ssh: the repository the environment\'s sessions want is cloned ahead, in a work folder of its own', async () => {
    await withBackendTurn('ssh', async () => {
      host.hands.pool.fill();
      await until(() => readyOf(sshEnv) === 1, 'a pooled ssh hand');
      // The first session with a repository: the pool had none made with it (a miss) and learns it.
      const first = session(sshEnv, true);
      const r1 = await host.hands.execute(first, undefined, 'bash', { command: 'cat repo/README' });
      expect(r1.content).toContain('pooled');
      expect(events(first).some((e) => e.type === 'hand.taken_from_pool')).toBe(false);
      const progress = events(first).filter((e) => e.type === 'hand.provisioning_progress');
      expect(progress.map((e) => e.phase)).toEqual(expect.arrayContaining(['connecting', 'cloning', 'unpacking']));
      expect(progress.some((e) => e.stage === 'Receiving objects' || (e.objects as { total?: number } | undefined)?.total !== undefined || e.files !== undefined)).toBe(true);
      await host.hands.release(first, 'main');
      await until(() => host.hands.pool.state().find((s) => s.environment_id === sshEnv)!.misses === 1 && readyOf(sshEnv) === 1, 'a pooled ssh hand with the repository');
      const second = session(sshEnv, true);
      const r2 = await host.hands.execute(second, undefined, 'bash', { command: 'pwd; cat repo/README' });
      expect(r2.content).toMatch(/\.corral-pool\/hpool_[a-z0-9]+\npooled/);
      expect(events(second).find((e) => e.type === 'hand.taken_from_pool')).toMatchObject({ repositories_ready: 1 });
      expect(events(second).find((e) => e.type === 'hand.resource_applied')).toMatchObject({ pre_applied: true, path: 'repo' });
      await host.hands.release(second, 'main');
    });
  }, 180_000);

  it('shutdown closes every hand still waiting and removes their folders', async () => {
    await until(() => readyOf(dockerEnv) === 2 && readyOf(sshEnv) === 1, 'the pools full');
    const [before, after] = await withBackendTurn('ssh', async () => {
      const shell = await sshHandKind.connect(sshConfig() as never, { label: 'check' });
      const count = () =>
        new Promise<number>((resolve) => {
          let out = '';
          void shell.exec('ls -1 ~/corral-work/.corral-pool 2>/dev/null | wc -l', { onOutput: (c) => (out += c.toString()) }).then(() => resolve(Number(out.trim())));
        });
      const was = await count();
      closed = true;
      await host.close();
      const is = await count();
      await shell.close();
      return [was, is];
    });
    // The waiting hand's folder goes; those of hands given to sessions stay, like any ssh hand's.
    expect(after).toBe(before - 1);
    expect(await poolContainers()).toBe(0);
  }, 120_000);
});
