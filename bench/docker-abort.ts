/**
 * `npx tsx bench/docker-abort.ts`: how long an aborted `bash` call on a container hand takes to
 * end (abort → result), with Ctrl-C sent through the container's init (one engine API call) and
 * through a `kill` exec (a shell that could not note its group), alternating on the same engine,
 * for the private Docker Engine and Podman of test/hands-env. BENCH_ROUNDS calls per side.
 */
import { dockerHandKind } from '../main/hands/docker';
import { createShellHand } from '../main/hands/remote/shell-hand';
import { handsEnv } from '../test/helpers/hands-env';
import { fmt, percentile } from './stats';

const rounds = Number(process.env.BENCH_ROUNDS ?? 12);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function hand(host: string, image: string, noted: boolean) {
  const shell = await dockerHandKind.connect({ type: 'docker', image, docker_host: host }, { label: 'bench-abort' });
  const h = createShellHand(shell, { workDir: '/work', label: 'bench' });
  // /tmp made a file: the shell cannot note its group, and Ctrl-C goes through an exec.
  if (!noted) await h.execute('bash', { command: 'rm -rf /tmp && touch /tmp' });
  await h.execute('bash', { restart: true });
  await h.execute('bash', { command: 'true' });
  return h;
}

for (const [engine, host, image] of [
  ['docker', handsEnv('docker').CORRAL_TEST_DOCKER_HOST!, handsEnv('docker').CORRAL_TEST_DOCKER_IMAGE!],
  ['podman', handsEnv('podman').CORRAL_TEST_PODMAN_HOST!, handsEnv('podman').CORRAL_TEST_PODMAN_IMAGE!],
] as const) {
  const sides = { init: await hand(host, image, true), exec: await hand(host, image, false) };
  const ms: Record<keyof typeof sides, number[]> = { init: [], exec: [] };
  for (let i = 0; i < rounds; i++) {
    for (const k of ['init', 'exec'] as const) {
      const ctrl = new AbortController();
      const call = sides[k].execute('bash', { command: 'sleep 3900' }, { signal: ctrl.signal });
      await sleep(300);
      const t = performance.now();
      ctrl.abort();
      const r = await call;
      if (!/SIGINT.*state are kept/.test(r.content)) throw new Error(`${engine} ${k}: not a clean Ctrl-C: ${r.content}`);
      ms[k].push(performance.now() - t);
    }
  }
  const line = (xs: number[]) => `p50 ${fmt(percentile(xs, 50), 0)} / p95 ${fmt(percentile(xs, 95), 0)} ms`;
  console.log(`${engine.padEnd(7)} abort → result, n ${rounds} each: through the init ${line(ms.init)}; through a kill exec ${line(ms.exec)}`);
  await Promise.all([sides.init.dispose(), sides.exec.dispose()]);
}
process.exit(0);
