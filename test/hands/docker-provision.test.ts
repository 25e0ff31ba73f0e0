/**
 * The docker hand provisioning its container (image, network, work folder, engine errors), and its
 * pieces, on both engines (test/helpers/docker-engines.ts): a private Docker Engine
 * (test/hands-env/docker.sh) and a private Podman service through its Docker-compatible API
 * (test/hands-env/podman.sh). Where Podman answers differently in a way users would not care
 * about, the assertion says so for Podman only.
 */
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import Docker from 'dockerode';
import { beforeAll, describe, expect, it } from 'vitest';
import { candidates, DockerConfigError, DockerEngineError, dockerHandKind, DockerImageError, type DockerConfig } from '../../main/hands/docker';
import { PgidFilter } from '../../main/hands/docker/process-group';
import { BACKENDS, useEngine } from '../helpers/docker-engines';

describe.each(BACKENDS)('on $engine', ({ engine, env }) => {
  const podman = engine === 'podman';
  const t = useEngine(env, 'provision');
  const { LABEL, connect, run, leftovers } = t;
  let image: string;
  let docker: Docker;
  let config: DockerConfig;
  beforeAll(() => ({ image, docker, config } = t));

  describe('the docker hand: provisioning', () => {
    it('starts a labelled container with no network but loopback, the limits asked, and the work folder', async () => {
      const shell = await connect({ memory_mb: 64, cpus: 0.5 });
      const info = await shell.container.inspect();
      expect(info.State.Running).toBe(true);
      expect(info.Config.Labels).toMatchObject({ 'corral.hand': '1', 'corral.label': LABEL });
      // Podman qualifies a name without a registry with its local one (the image was imported
      // as corral-test/busybox:latest and is listed as localhost/corral-test/busybox:latest);
      // both names start the same image.
      expect(info.Config.Image).toBe(podman ? `localhost/${image}` : image);
      expect(info.HostConfig.NetworkMode).toBe('none');
      expect(info.HostConfig.Memory).toBe(64 * 1024 * 1024);
      expect(info.HostConfig.NanoCpus).toBe(500_000_000);
      expect(info.HostConfig.AutoRemove).toBe(false);
      // Only loopback, seen from inside.
      const nets = await run(shell, 'ls /sys/class/net');
      expect(nets.stdout.split(/\s+/).filter(Boolean)).toEqual(['lo']);
      // The memory limit as the container's cgroup has it (v1 or v2).
      const mem = await run(shell, 'cat /sys/fs/cgroup/memory/memory.limit_in_bytes 2>/dev/null || cat /sys/fs/cgroup/memory.max');
      expect(Number(mem.stdout.trim())).toBe(64 * 1024 * 1024);
      // The work folder exists and commands run in it.
      expect((await run(shell, 'pwd', { cwd: '/work' })).stdout.trim()).toBe('/work');
      expect(dockerHandKind.defaultWorkDir(config)).toBe('/work');
      expect(dockerHandKind.describe(config)).toBe(`docker ${image}`);
    });

    it('uses the network and work folder the config names', async () => {
      const shell = await connect({ network: 'host', working_dir: '/srv/project/x' });
      expect((await shell.container.inspect()).HostConfig.NetworkMode).toBe('host');
      const nets = (await run(shell, 'ls /sys/class/net')).stdout.split(/\s+/).filter(Boolean).sort();
      expect(nets).toEqual(fs.readdirSync('/sys/class/net').sort());
      expect((await run(shell, 'pwd', { cwd: '/srv/project/x' })).stdout.trim()).toBe('/srv/project/x');
      expect(dockerHandKind.defaultWorkDir({ ...config, working_dir: '/srv/project/x' })).toBe('/srv/project/x');
    });

    it('says which sockets it tried when no engine answers', async () => {
      const missing = '/tmp/corral-hands/docker/no-such-engine.sock';
      const e1 = await dockerHandKind.connect({ ...config, docker_host: `unix://${missing}` }, { label: LABEL }).catch((e: unknown) => e);
      expect(e1).toBeInstanceOf(DockerEngineError);
      expect((e1 as Error).message).toContain(`unix://${missing}`);
      expect((e1 as Error).message).toMatch(/no such socket/);

      // A socket file nobody listens on.
      const stale = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'corral-docker-')), 'stale.sock');
      const server = net.createServer();
      await new Promise<void>((r) => server.listen(stale, r));
      // Keep the file but stop listening: close the listening handle without unlinking.
      fs.linkSync(stale, `${stale}.keep`);
      await new Promise((r) => server.close(r));
      fs.renameSync(`${stale}.keep`, stale);
      const e2 = await dockerHandKind.connect({ ...config, docker_host: stale }, { label: LABEL }).catch((e: unknown) => e);
      expect(e2).toBeInstanceOf(DockerEngineError);
      expect((e2 as Error).message).toContain(stale);
      expect((e2 as Error).message).toMatch(/nothing answers there/);

      const e3 = await dockerHandKind.connect({ ...config, docker_host: 'gopher://x' }, { label: LABEL }).catch((e: unknown) => e);
      expect((e3 as Error).message).toMatch(/unknown scheme gopher/);
    });

    it('looks for the engine in the documented order', () => {
      const specs = candidates(undefined, { DOCKER_HOST: 'tcp://10.0.0.1:2375', XDG_RUNTIME_DIR: '/run/user/1000', HOME: '/home/ann' }).map((c) => c.spec);
      expect(specs).toEqual(['tcp://10.0.0.1:2375', 'unix:///var/run/docker.sock', 'unix:///run/user/1000/podman/podman.sock', 'unix:///run/podman/podman.sock', 'unix:///home/ann/.docker/run/docker.sock']);
      expect(candidates('unix:///x.sock', { DOCKER_HOST: 'tcp://y:1' }).map((c) => c.spec)).toEqual(['unix:///x.sock']);
    });

    it('says the image is missing, pulls nothing and leaves nothing behind', async () => {
      const label = `${LABEL}-noimage`;
      const t0 = Date.now();
      const err = await dockerHandKind.connect({ ...config, image: 'corral-test/not-there:1' }, { label }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(DockerImageError);
      // The socket is docker.sock or podman.sock.
      expect((err as Error).message).toMatch(new RegExp(`'corral-test/not-there:1' is not on the Docker engine at unix://.*${engine}\\.sock.*does not pull`));
      expect(Date.now() - t0).toBeLessThan(5_000);
      await expect(docker.getImage('corral-test/not-there:1').inspect()).rejects.toMatchObject({ statusCode: 404 });
      expect(await leftovers(label)).toEqual([]);
    });

    it('a connect aborted at any moment leaves no container behind', async () => {
      const label = `${LABEL}-abort`;
      let rejected = 0;
      for (const ms of [0, 5, 20, 40, 80, 120, 200]) {
        const ctrl = new AbortController();
        setTimeout(() => ctrl.abort(new Error('stop')), ms);
        try {
          const shell = await dockerHandKind.connect(config, { label, signal: ctrl.signal });
          await shell.close();
        } catch (err) {
          expect((err as Error).message).toBe('stop');
          rejected++;
        }
      }
      expect(rejected).toBeGreaterThan(0);
      expect(await leftovers(label)).toEqual([]);
    });

    it('rejects bad limits clearly, and leaves nothing behind', async () => {
      const label = `${LABEL}-limits`;
      const tooSmall = await dockerHandKind.connect({ ...config, memory_mb: 2 }, { label }).catch((e: unknown) => e);
      expect(tooSmall).toBeInstanceOf(DockerConfigError);
      expect((tooSmall as Error).message).toMatch(/memory_mb .* at least 6/);
      const zero = await dockerHandKind.connect({ ...config, cpus: 0 }, { label }).catch((e: unknown) => e);
      expect((zero as Error).message).toMatch(/cpus must be/);
      // More CPUs than the machine has: the engine refuses, and the error says which limit.
      const tooMany = await dockerHandKind.connect({ ...config, cpus: os.cpus().length + 64 }, { label }).catch((e: unknown) => e);
      expect(tooMany).toBeInstanceOf(DockerConfigError);
      expect((tooMany as Error).message).toMatch(/cpus/i);
      expect(await leftovers(label)).toEqual([]);
    });
  });
});

describe('the docker hand: pieces', () => {
  it('takes the process group line out of stderr, however the chunks fall', () => {
    const whole = Buffer.from('corral-pgid:42\nreal stderr\n');
    for (let cut = 0; cut <= whole.length; cut++) {
      const got: Buffer[] = [];
      const f = new PgidFilter((c) => got.push(c));
      f.write(whole.subarray(0, cut));
      f.write(whole.subarray(cut));
      f.end();
      expect(Buffer.concat(got).toString()).toBe('real stderr\n');
    }
    const got: Buffer[] = [];
    const f = new PgidFilter((c) => got.push(c));
    f.write(Buffer.from('OCI runtime exec failed\n'));
    f.end();
    expect(Buffer.concat(got).toString()).toBe('OCI runtime exec failed\n');
    return expect(f.pgid).resolves.toBeNull();
  });
});
