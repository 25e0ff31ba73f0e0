/**
 * Containers a host leaves behind when it is killed outright are removed by the next host on the
 * same data folder (main/hands/docker/container-records.ts), on both engines.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeAll, describe, expect, it, onTestFinished, vi } from 'vitest';
import { ContainerRecords, containerRecordDir, createDockerHandKind, removeOrphanContainers, takeContainerRecords } from '../../main/hands/docker';
import { createHost, type Host } from '../../main/host';
import { BACKENDS, useEngine } from '../helpers/docker-engines';
import { tmpDir } from '../helpers/tmp';

const fixture = path.join(__dirname, '../fixtures/orphan-docker-host.ts');

let child: ChildProcess | undefined;
let host: Host | undefined;
afterEach(async () => {
  child?.kill('SIGKILL');
  child = undefined;
  await host?.close();
  host = undefined;
});

describe.each(BACKENDS)('on $engine', ({ env }) => {
  const t = useEngine(env, 'orphans');
  let cfg: { image: string; docker_host: string };
  beforeAll(() => (cfg = { image: t.image, docker_host: t.host }));
  /** The container's state on the engine: running, exited, or gone. */
  const stateOf = async (name: string) =>
    t.docker
      .getContainer(name)
      .inspect()
      .then(
        (i) => (i.State.Running ? 'running' : 'exited'),
        (e: { statusCode?: number }) => (e.statusCode === 404 ? 'gone' : Promise.reject(e)),
      );

  it('a container is on record from before it exists until the engine has removed it', async () => {
    const dataDir = tmpDir();
    const kind = createDockerHandKind(new ContainerRecords(containerRecordDir(dataDir)));
    const shell = await kind.connect({ type: 'docker', ...cfg }, { label: t.LABEL });
    const [record, ...more] = takeContainerRecords(dataDir);
    expect(more).toEqual([]);
    expect(record).toMatchObject({ endpoint: shell.endpoint, host_pid: process.pid });
    expect((await shell.container.inspect()).Name).toBe(`/${record!.name}`);
    await shell.close();
    expect(await stateOf(record!.name)).toBe('gone');
    expect(takeContainerRecords(dataDir)).toEqual([]);
  });

  it('a host killed with kill -9 leaves its container running; the next host on the data folder removes it', async () => {
    const dataDir = tmpDir();
    child = spawn(process.execPath, ['--import', 'tsx', fixture, dataDir, cfg.docker_host, cfg.image], { stdio: ['ignore', 'pipe', 'inherit'] });
    const name = await new Promise<string>((resolve, reject) => {
      let out = '';
      child!.stdout!.on('data', (d: Buffer) => {
        out += d;
        const m = /RUNNING (\S+)/.exec(out);
        if (m) resolve(m[1]!);
      });
      child!.once('exit', (code) => reject(new Error(`the fixture host exited (${code}) before its container was made: ${out}`)));
    });
    // Its command runs: the container is in use, not just made.
    const runs = async () => ((await t.docker.getContainer(name).top()) as { Processes: string[][] }).Processes.some((p) => p.join(' ').includes('sleep 600'));
    await vi.waitFor(async () => expect(await runs()).toBe(true), { timeout: 30_000, interval: 200 });
    child.kill('SIGKILL');
    await new Promise((r) => child!.once('exit', r));
    child = undefined;
    expect(await stateOf(name)).toBe('running');
    onTestFinished(() => t.docker.getContainer(name).remove({ force: true }).catch(() => {}));

    host = createHost({ dataDir });
    await vi.waitFor(async () => expect(await stateOf(name)).toBe('gone'), { timeout: 20_000, interval: 100 });
    await vi.waitFor(() => expect(takeContainerRecords(dataDir)).toEqual([]), { timeout: 5_000, interval: 50 });
  }, 60_000);

  it('a record whose engine cannot be reached is kept for the next start; one whose container is gone is dropped', async () => {
    const dataDir = tmpDir();
    const records = new ContainerRecords(containerRecordDir(dataDir));
    const missing = path.join(dataDir, 'no-engine.sock');
    await records.add('corral-unreachable-0000', `unix://${missing}`);
    await records.add('corral-never-made-0000', t.host);
    // Half a record (its host died writing it) names nothing: it goes.
    fs.writeFileSync(path.join(containerRecordDir(dataDir), 'corral-half-0000.json.tmp'), '{"name":"corral-ha');
    const sweep = await removeOrphanContainers(dataDir, takeContainerRecords(dataDir));
    expect(sweep.removed).toEqual([]);
    expect(sweep.gone).toEqual(['corral-never-made-0000']);
    expect(sweep.kept).toEqual([{ name: 'corral-unreachable-0000', endpoint: `unix://${missing}`, why: expect.stringMatching(/no such socket/) }]);
    expect(takeContainerRecords(dataDir).map((r) => r.name)).toEqual(['corral-unreachable-0000']);
    expect(fs.readdirSync(containerRecordDir(dataDir))).toHaveLength(1);
  });

});
