/**
 * `npm run bench:hands`: per hand kind on this machine, provision time (connect: container
 * start, SSH handshake, device claim) and the round trip of `bash echo` through the built-in
 * tools, p50/p95. Starts the private test daemons first (test/hands-env/*.sh, as root).
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { adbHandKind } from '../main/hands/adb';
import { dockerHandKind } from '../main/hands/docker';
import { createLocalHand } from '../main/hands/local';
import { createShellHand } from '../main/hands/remote/shell-hand';
import type { RemoteHandKind } from '../main/hands/remote/types';
import { sshHandKind } from '../main/hands/ssh';
import type { Hand } from '../main/hands/types';
import { fmt, percentile } from './stats';

const root = path.resolve(import.meta.dirname, '..');
const PROVISIONS = Number(process.env.BENCH_PROVISIONS ?? 10);
const ECHOES = Number(process.env.BENCH_ECHOES ?? 100);

/** Starts a kind's private daemon and returns the variables its script exports. */
function envOf(kind: string): Record<string, string> {
  const out = execFileSync('bash', [path.join(root, `test/hands-env/${kind}.sh`), 'start'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  const vars: Record<string, string> = {};
  for (const m of out.matchAll(/^export (\w+)=['"]?([^'"\n]*)['"]?$/gm)) vars[m[1]!] = m[2]!;
  Object.assign(process.env, vars);
  return vars;
}

interface Target {
  kind: string;
  provision(): Promise<Hand>;
}

function remote<C>(kind: RemoteHandKind<C>, config: C): Target {
  return {
    kind: kind.describe(config),
    async provision() {
      const shell = await kind.connect(config, { label: 'bench' });
      return createShellHand(shell, { workDir: (config as { working_dir?: string }).working_dir ?? kind.defaultWorkDir(config), label: 'bench' });
    },
  };
}

async function measure(t: Target) {
  const provision: number[] = [];
  let hand: Hand | undefined;
  for (let i = 0; i < PROVISIONS; i++) {
    const t0 = performance.now();
    const h = await t.provision();
    provision.push(performance.now() - t0);
    if (i < PROVISIONS - 1) await h.dispose();
    else hand = h;
  }
  const echo: number[] = [];
  for (let i = 0; i < ECHOES; i++) {
    const t0 = performance.now();
    const out = await hand!.execute('bash', { command: 'echo hi' });
    echo.push(performance.now() - t0);
    if (out.isError || !out.content.startsWith('hi')) throw new Error(`${t.kind}: echo failed: ${out.content}`);
  }
  await hand!.dispose();
  return { provision, echo };
}

async function main() {
  console.log(`corral bench:hands — ${os.cpus().length} cores, node ${process.version}; ${PROVISIONS} provisions and ${ECHOES} echoes per kind\n`);
  const targets: Target[] = [{ kind: 'local (work folder)', provision: async () => createLocalHand({ workDir: fs.mkdtempSync(path.join(os.tmpdir(), 'corral-bench-local-')) }) }];
  const ssh = envOf('ssh');
  targets.push(remote(sshHandKind, { type: 'ssh', host: ssh.CORRAL_TEST_SSH_HOST!, port: Number(ssh.CORRAL_TEST_SSH_PORT), user: ssh.CORRAL_TEST_SSH_USER!, identity_file: ssh.CORRAL_TEST_SSH_KEY! } as never));
  const docker = envOf('docker');
  targets.push(remote(dockerHandKind, { type: 'docker', image: docker.CORRAL_TEST_DOCKER_IMAGE!, docker_host: docker.CORRAL_TEST_DOCKER_HOST! } as never));
  const podman = envOf('podman');
  const onPodman = remote(dockerHandKind, { type: 'docker', image: podman.CORRAL_TEST_PODMAN_IMAGE!, docker_host: podman.CORRAL_TEST_PODMAN_HOST! } as never);
  targets.push({ ...onPodman, kind: `${onPodman.kind} (Podman)` });
  const adb = envOf('adb');
  targets.push(remote(adbHandKind, { type: 'adb', serial: adb.CORRAL_TEST_ADB_SERIAL!, adb_port: Number(adb.ANDROID_ADB_SERVER_PORT) } as never));
  console.log('kind                                         provision p50 / p95          bash echo round trip p50 / p95');
  for (const t of targets) {
    try {
      const r = await measure(t);
      console.log(`${t.kind.padEnd(44)} ${`${fmt(percentile(r.provision, 50), 1)} / ${fmt(percentile(r.provision, 95), 1)} ms`.padEnd(28)} ${fmt(percentile(r.echo, 50), 2)} / ${fmt(percentile(r.echo, 95), 2)} ms`);
    } catch (err) {
      console.log(`${t.kind.padEnd(44)} failed: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
