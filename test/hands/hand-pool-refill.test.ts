/**
 * How the warm pool makes its hands (hand-pool-slots.ts, hand-pool-pack.ts), on the real docker
 * test backend: one at a time across all pools (refills made all at once swamped the machine);
 * a repository cloned once and unpacked again on later hands while its refs are unchanged, a
 * new clone as soon as they change; and a session that takes a hand while another is being made
 * still gets a hand of its own.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHost, type Host } from '../../main/host';
import type { LoggedEvent } from '../../main/session/types';
import { handsEnv } from '../helpers/hands-env';
import { tmpDir } from '../helpers/tmp';

let host: Host;
let docker: Record<string, string>;
let src: string;
const LABEL_A = `refill-a-${process.pid}`;
const LABEL_B = `refill-b-${process.pid}`;
const LABEL_R = `refill-r-${process.pid}`;
const logged: { msg?: string; packs_reused?: number; repositories?: number; environment_id?: string }[] = [];
const gitEnv = { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@t', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@t' };
const git = (...args: string[]) => execFileSync('git', args, { cwd: src, env: gitEnv });

async function until(ok: () => boolean, what: string, ms = 120_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > deadline) throw new Error(`waited ${ms} ms for ${what}: ${JSON.stringify(host.hands.pool.state())}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
const poolOf = (env: string) => host.hands.pool.state().find((s) => s.environment_id === env);
const events = (id: string): LoggedEvent[] => host.log.getEvents(id, { from: 1, limit: 1000 });
const dockerConfig = () => ({ type: 'docker', image: docker.CORRAL_TEST_DOCKER_IMAGE, docker_host: docker.CORRAL_TEST_DOCKER_HOST });
const makeEnv = (name: string) => host.environments.create({ name, config: dockerConfig() as never, metadata: {}, description: null }).id;
function session(env: string, repo: boolean): string {
  return host.log.createSession({
    environment_id: env,
    record: { agent: { model: { id: 'm' }, tools: [{ type: 'agent_toolset_20260401' }] }, resources: repo ? [{ type: 'github_repository', url: `file://${src}`, mount_path: '/workspace/repo' }] : [] },
  }).session.id;
}
/** The pool's hands made with the repository on them, as the host's log tells. */
const readyLogs = (env: string) => logged.filter((l) => l.msg === 'pooled hand ready' && l.environment_id === env && l.repositories === 1);

beforeAll(async () => {
  docker = handsEnv('docker');
  src = path.join(tmpDir(), 'proj');
  fs.mkdirSync(src);
  fs.writeFileSync(path.join(src, 'README'), 'one\n');
  git('init', '--quiet', '-b', 'main');
  git('add', '.');
  git('commit', '--quiet', '-m', 'one');
  const logger = pino({ level: 'info' }, { write: (line: string) => void logged.push(JSON.parse(line)) });
  host = createHost({ dataDir: tmpDir(), workRoot: tmpDir('corral-work-'), logger, handPool: { [LABEL_A]: 3, [LABEL_B]: 2, [LABEL_R]: 2 } });
  await host.started;
}, 180_000);
afterAll(() => host?.close());

describe('making pooled hands', () => {
  it('one at a time across all pools: the others wait their turn (queued), and every pool fills', async () => {
    // Made before any pool is filled, so all five hands are asked for at once.
    const a = makeEnv(LABEL_A);
    const b = makeEnv(LABEL_B);
    let most = 0;
    let queued = 0;
    const stop = host.hands.pool.subscribe((pools) => {
      const mine = pools.filter((p) => p.environment_id === a || p.environment_id === b);
      most = Math.max(most, mine.reduce((n, p) => n + p.provisioning - (p.queued ?? 0), 0));
      queued = Math.max(queued, mine.reduce((n, p) => n + (p.queued ?? 0), 0));
    });
    try {
      host.hands.pool.fill();
      await until(() => poolOf(a)?.ready === 3 && poolOf(b)?.ready === 2, 'both pools full');
    } finally {
      stop();
    }
    expect(most).toBe(1);
    expect(queued).toBeGreaterThanOrEqual(3);
    expect([poolOf(a), poolOf(b)]).toMatchObject([{ failures: 0, provisioning: 0, queued: 0 }, { failures: 0, provisioning: 0, queued: 0 }]);
  }, 240_000);

  it('a repository is cloned once and unpacked on later hands while unchanged; a change is cloned anew; each hand has its own copy', async () => {
    const r = makeEnv(LABEL_R);
    // The first session teaches the pool the repository (a miss: it clones for itself).
    const first = session(r, true);
    expect((await host.hands.execute(first, undefined, 'bash', { command: 'cat repo/README' })).content).toContain('one');
    await host.hands.release(first, 'main');
    await until(() => poolOf(r)?.ready === 2 && readyLogs(r).length >= 2, 'two pooled hands with the repository');
    // One clone for both (the second hand's pack was the first's), not one each.
    expect(readyLogs(r).map((l) => l.packs_reused).sort()).toEqual([0, 1]);
    const [x, y] = [session(r, true), session(r, true)];
    const rx = await host.hands.execute(x, undefined, 'bash', { command: 'echo mine > repo/README; hostname' });
    const ry = await host.hands.execute(y, undefined, 'bash', { command: 'cat repo/README; cat repo/.git/refs/heads/main; hostname' });
    expect(events(x).some((e) => e.type === 'hand.taken_from_pool')).toBe(true);
    expect(events(y).some((e) => e.type === 'hand.taken_from_pool')).toBe(true);
    // Unpacked, the clone is as a clone is (its files, its branch at the repository's commit), in a container of its own.
    const [readme, head, hostY] = ry.content.trim().split('\n');
    expect(readme).toBe('one');
    expect(head).toBe(git('rev-parse', 'HEAD').toString().trim());
    expect(hostY).not.toBe(rx.content.trim());
    // The repository changes while its replacements are made: the next hands have the change.
    fs.writeFileSync(path.join(src, 'README'), 'two\n');
    git('commit', '--quiet', '-am', 'two');
    await host.hands.release(x, 'main');
    await host.hands.release(y, 'main');
    await until(() => poolOf(r)?.ready === 2 && readyLogs(r).length >= 4, 'the pool refilled');
    const z = session(r, true);
    const rz = await host.hands.execute(z, undefined, 'bash', { command: 'cat repo/README; cat repo/.git/refs/heads/main' });
    expect(events(z).some((e) => e.type === 'hand.taken_from_pool')).toBe(true);
    expect(rz.content.trim().split('\n').slice(0, 2)).toEqual(['two', git('rev-parse', 'HEAD').toString().trim()]);
    // The refills after the change: the first cloned anew (refs changed), the second reused its pack.
    expect(readyLogs(r).slice(2).map((l) => l.packs_reused)).toEqual([0, 1]);
    await host.hands.release(z, 'main');
  }, 240_000);

  it('a session that takes a hand while another is being made gets a ready one of its own, else makes its own', async () => {
    const a = host.environments.list({ limit: 100 }).data.find((e) => e.record.name === LABEL_A)!.id;
    await until(() => poolOf(a)?.ready === 3, 'pool A full');
    const ids = [session(a, false), session(a, false), session(a, false), session(a, false)];
    const names: string[] = [];
    // One by one, each while the previous one's replacement waits or is being made.
    for (const id of ids) names.push((await host.hands.execute(id, undefined, 'bash', { command: 'hostname' })).content.trim());
    expect(ids.map((id) => events(id).some((e) => e.type === 'hand.taken_from_pool'))).toEqual([true, true, true, false]);
    expect(new Set(names).size).toBe(4);
    for (const id of ids) await host.hands.release(id, 'main');
  }, 240_000);
});
