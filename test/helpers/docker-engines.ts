/**
 * Shared setup of the docker hand tests (test/hands/docker-*.test.ts), each test run on both
 * engines: a private Docker Engine (test/hands-env/docker.sh) and a private Podman service through
 * its Docker-compatible API (test/hands-env/podman.sh), each with the same busybox image.
 */
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import Docker from 'dockerode';
import { afterAll, beforeAll, expect } from 'vitest';
import { dockerHandKind, type DockerConfig, type DockerShell } from '../../main/hands/docker';
import { handsEnv } from './hands-env';

/** The engines every test runs on, each started (idempotently) by its test/hands-env script. */
export const BACKENDS = [
  {
    engine: 'docker',
    env() {
      const e = handsEnv('docker');
      return { host: e.CORRAL_TEST_DOCKER_HOST!, image: e.CORRAL_TEST_DOCKER_IMAGE! };
    },
  },
  {
    engine: 'podman',
    env() {
      const e = handsEnv('podman');
      return { host: e.CORRAL_TEST_PODMAN_HOST!, image: e.CORRAL_TEST_PODMAN_IMAGE! };
    },
  },
] as const;


export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A unix-socket proxy to the engine that can be cut (connections closed) or frozen (nothing forwarded). */
export function engineProxy(target: string) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'corral-docker-proxy-'));
  const sock = path.join(dir, 'proxy.sock');
  const sockets = new Set<net.Socket>();
  let frozen = false;
  const server = net.createServer((client) => {
    sockets.add(client);
    if (frozen) return;
    const up = net.connect(target);
    sockets.add(up);
    client.pipe(up);
    up.pipe(client);
    const drop = () => (client.destroy(), up.destroy());
    client.on('error', drop).on('close', drop);
    up.on('error', drop).on('close', drop);
  });
  return {
    sock,
    listen: () => new Promise<void>((r) => server.listen(sock, r)),
    cut() {
      server.close();
      for (const s of sockets) s.destroy();
    },
    freeze() {
      frozen = true;
      for (const s of sockets) s.pause();
      // Paused sockets still read into the pipe; stop the pipes too.
      for (const s of sockets) s.unpipe();
    },
    close() {
      server.close();
      for (const s of sockets) s.destroy();
    },
  };
}

/** One engine's test context: filled in by the hooks useEngine registers. */
export interface EngineContext {
  /** Labels this file's containers (per file and process, so files never remove each other's). */
  LABEL: string;
  host: string;
  image: string;
  docker: Docker;
  config: DockerConfig;
  connect(extra?: Partial<DockerConfig>, label?: string): Promise<DockerShell>;
  /** Runs a command on the raw shell and returns its output. */
  run(shell: DockerShell, command: string, opts?: { stdin?: Buffer; cwd?: string }): Promise<Awaited<ReturnType<DockerShell['exec']>> & { stdout: string; stderr: string }>;
  /** Live (non-zombie) processes in the container whose command line matches. */
  liveProcesses(shell: DockerShell, pattern: RegExp): Promise<string[]>;
  /** Containers of this test file still on the engine. */
  leftovers(label?: string): Promise<Docker.ContainerInfo[]>;
}

/**
 * Registers, inside a `describe.each(BACKENDS)` block, the hooks that reach one engine and remove
 * what the file's tests left on it; returns the context the tests use.
 */
export function useEngine(env: () => { host: string; image: string }, file: string): EngineContext {
  const opened: DockerShell[] = [];
  const t: EngineContext = {
    LABEL: `docker-test-${file}-${process.pid}`,
    host: '',
    image: '',
    docker: undefined as unknown as Docker,
    config: undefined as unknown as DockerConfig,
    async connect(extra = {}, label = t.LABEL) {
      const shell = await dockerHandKind.connect({ ...t.config, ...extra }, { label });
      opened.push(shell);
      return shell;
    },
    async run(shell, command, opts = {}) {
      const out: Buffer[] = [];
      const err: Buffer[] = [];
      const res = await shell.exec(command, { ...opts, onOutput: (c, s) => (s === 'stdout' ? out : err).push(c) });
      return { ...res, stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8') };
    },
    async liveProcesses(shell, pattern) {
      const ps = await t.run(shell, 'ps -o stat,args');
      expect(ps.exitCode).toBe(0);
      return ps.stdout.split('\n').filter((l) => pattern.test(l) && !/^\s*Z/.test(l) && !l.includes('ps -o'));
    },
    leftovers(label = t.LABEL) {
      return t.docker.listContainers({ all: true, filters: { label: [`corral.label=${label}`] } });
    },
  };

  beforeAll(() => {
    ({ host: t.host, image: t.image } = env());
    t.docker = new Docker({ socketPath: t.host.replace(/^unix:\/\//, ''), host: undefined } as Docker.DockerOptions);
    t.config = { type: 'docker', image: t.image, docker_host: t.host };
  });

  afterAll(async () => {
    await Promise.all(opened.map((s) => s.close()));
    for (const c of await t.leftovers()) await t.docker.getContainer(c.Id).remove({ force: true });
  });
  return t;
}
