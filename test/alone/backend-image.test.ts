import { execFileSync, spawnSync } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { handsEnv } from '../helpers/hands-env';

// The container backends' scripts must check what they build, not only that an image of that
// name exists (issue 7: a failed `podman import` left a 1.1 kB image that every later start
// took for a good one). This file replaces the shared test image, so it runs alone, after the rest.
const root = path.resolve(__dirname, '../..');
const script = (kind: string) => path.join(root, `test/hands-env/${kind}.sh`);

const engines = [
  { kind: 'docker', hostVar: 'CORRAL_TEST_DOCKER_HOST', imageVar: 'CORRAL_TEST_DOCKER_IMAGE', cli: (host: string) => ['docker', ['-H', host]] as const },
  {
    kind: 'podman',
    hostVar: 'CORRAL_TEST_PODMAN_HOST',
    imageVar: 'CORRAL_TEST_PODMAN_IMAGE',
    cli: (host: string) => ['podman', ['--remote', '--url', host]] as const,
  },
] as const;

describe.each(engines)('the $kind backend script', ({ kind, hostVar, imageVar, cli }) => {
  const env = handsEnv(kind);
  const host = env[hostVar]!;
  const image = env[imageVar]!;
  const [bin, base] = cli(host);
  // Podman's CLI reads the backend's own configuration (storage, runtime) from these files.
  const cliEnv = { ...process.env, CONTAINERS_CONF: '/tmp/corral-hands/podman/containers.conf', CONTAINERS_STORAGE_CONF: '/tmp/corral-hands/podman/storage.conf' };
  const run = (...args: string[]) => spawnSync(bin, [...base, ...args], { encoding: 'utf8', env: cliEnv });
  const names = () => run('images', '--format', '{{.Repository}}:{{.Tag}}').stdout.split('\n').filter((n) => n.includes('corral-test/busybox') && !n.includes('corral-test/busybox-git')); // busybox-git: git-image.sh's own image
  const shWorks = () => run('run', '--rm', '--network', 'none', image, '/bin/sh', '-c', 'echo works').stdout.trim() === 'works';

  it('replaces a half-made image (empty, under the test image name) with one that runs /bin/sh', () => {
    run('rmi', '-f', image);
    // What a failed import leaves: an image with the right name and nothing in it.
    const made = spawnSync(bin, [...base, 'import', '-', image], { input: '', env: cliEnv, encoding: 'utf8' });
    if (made.status !== 0) {
      // Docker refuses an empty stdin; an empty tarball makes the same half-made image.
      const empty = execFileSync('tar', ['-c', '-f', '-', '-T', '/dev/null']);
      expect(spawnSync(bin, [...base, 'import', '-', image], { input: empty, env: cliEnv }).status).toBe(0);
    }
    expect(shWorks()).toBe(false);

    const out = execFileSync('bash', [script(kind), 'start'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    expect(out).toContain(`${imageVar}=${image}`);
    expect(shWorks()).toBe(true);
    // No temporary build image is left behind.
    expect(names().map((n) => n.replace(/^localhost\//, ''))).toEqual([image]);
  });

  it('leaves no image behind when the build fails, and builds it at the next start', () => {
    run('rmi', '-f', image);
    // busybox-rootfs.sh cannot make its folder: the root filesystem is never made.
    const failed = spawnSync('bash', [script(kind), 'start'], { encoding: 'utf8', env: { ...process.env, TMPDIR: '/nonexistent/corral' } });
    expect(failed.status).not.toBe(0);
    expect(failed.stderr).toMatch(/root filesystem/);
    expect(names()).toEqual([]);

    execFileSync('bash', [script(kind), 'start'], { stdio: 'ignore' });
    expect(shWorks()).toBe(true);
  });
});
