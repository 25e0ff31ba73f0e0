/**
 * `npx tsx bench/pool-adopt.ts`: a pooled hand's first `bash` call (PersistentBash.run of `ls`)
 * on a shell started ahead, two ways, alternating on the same hand: the shell's process started
 * ahead and set up by the first call (a marker's round trip, then the command), and the shell
 * started and set up ahead, adopted by the first call (its folder and variables sent with the
 * command: one round trip). On a docker container and an SSH host of test/hands-env; prints
 * p50/p95 of each (BENCH_ROUNDS rounds).
 */
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { dockerHandKind } from '../main/hands/docker';
import { PersistentBash } from '../main/hands/persistent-bash';
import { prestartShell } from '../main/hands/prestarted-shell';
import type { RemoteShell } from '../main/hands/remote/types';
import type { ShellProcess, StartShell } from '../main/hands/shell-session';
import { sshHandKind } from '../main/hands/ssh';
import { handsEnv } from '../test/helpers/hands-env';
import { fmt, percentile } from './stats';

const rounds = Number(process.env.BENCH_ROUNDS ?? 40);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The shell's process started now, handed to the first start (as a pooled hand's was before adoption). */
async function processAhead(start: StartShell): Promise<StartShell> {
  let handlers: Parameters<StartShell>[0] | undefined;
  const proc: ShellProcess = await start({ onOutput: (c) => handlers?.onOutput(c), onExit: (r) => handlers?.onExit(r) });
  let given = false;
  return async (h) => {
    if (given) return start(h);
    given = true;
    handlers = h;
    return proc;
  };
}

async function measure(kind: string, shell: RemoteShell, cwd: string): Promise<void> {
  const start = shell.startShell!;
  const exports = "export CORRAL_BENCH='1'; ";
  const old: number[] = [];
  const adopted: number[] = [];
  for (let i = 0; i < rounds; i++) {
    for (const way of i % 2 ? ['old', 'adopted'] : ['adopted', 'old']) {
      const b =
        way === 'old'
          ? new PersistentBash({ startShell: await processAhead(start), cwd, exports })
          : new PersistentBash({ startShell: start, cwd, exports, adopt: (await prestartShell(start, { cwd, exports }))!.take });
      // Waiting in the pool a moment.
      await sleep(Number(process.env.BENCH_WAIT_MS ?? 1000));
      const t = performance.now();
      const r = await b.run({ command: 'ls' }, {});
      const ms = performance.now() - t;
      if (r.isError) throw new Error(`${kind} ${way}: ${r.content}`);
      (way === 'old' ? old : adopted).push(ms);
      await b.dispose();
    }
  }
  const line = (label: string, xs: number[]) => `${kind.padEnd(7)}${label.padEnd(52)} n ${xs.length}  p50 ${fmt(percentile(xs, 50), 1)} ms  p95 ${fmt(percentile(xs, 95), 1)} ms`;
  console.log(line('set up by the first call (process started ahead)', old));
  console.log(line('set up ahead, adopted by the first call', adopted));
}

console.log(`${os.cpus().length} cores, load average ${os.loadavg().map((l) => fmt(l, 2)).join(', ')}`);
const d = handsEnv('docker');
const docker = await dockerHandKind.connect({ type: 'docker', image: d.CORRAL_TEST_DOCKER_IMAGE!, docker_host: d.CORRAL_TEST_DOCKER_HOST! }, { label: `bench-adopt-${process.pid}` });
try {
  await measure('docker', docker, '/tmp');
} finally {
  await docker.close();
}
const s = handsEnv('ssh');
const sshConfig = { type: 'ssh', host: s.CORRAL_TEST_SSH_HOST!, port: Number(s.CORRAL_TEST_SSH_PORT), user: s.CORRAL_TEST_SSH_USER!, identity_file: s.CORRAL_TEST_SSH_KEY! } as const;
const ssh = await sshHandKind.connect(sshConfig as never, { label: `bench-adopt-${process.pid}` });
try {
  await measure('ssh', ssh, sshHandKind.defaultWorkDir(sshConfig as never));
} finally {
  await ssh.close();
}
console.log(`load average at the end ${os.loadavg().map((l) => fmt(l, 2)).join(', ')}`);
process.exit(0);
