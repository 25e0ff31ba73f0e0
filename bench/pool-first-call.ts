/**
 * `npx tsx bench/pool-first-call.ts`: a pooled docker (or, with BENCH_KIND=ssh, SSH) hand's first bash call (host.hands.execute,
 * from the call to its result) with a repository of BENCH_FILES files, one session at a time:
 * while nothing else runs, and while the pool is making a replacement (a container started and
 * the repository unpacked), and while a used hand is removed (a session ended). Prints p50/p95
 * of each: what a refill, and what a session's end, costs a pooled hand's first call.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { createHost } from '../main/host';
import { fmt, percentile } from './stats';
import { handsEnv } from '../test/helpers/hands-env';
import { makeRepo } from './ttft-repo';

const files = Number(process.env.BENCH_FILES ?? 3000);
const rounds = Number(process.env.BENCH_ROUNDS ?? 8);
const kind = process.env.BENCH_KIND === 'ssh' ? 'ssh' : 'docker';
const docker = handsEnv('docker');
const ssh = handsEnv('ssh');
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'corral-bench-pool-'));
const repoUrl = makeRepo(path.join(scratch, 'project'), files, 3);
const host = createHost({ dataDir: path.join(scratch, 'data'), workRoot: path.join(scratch, 'work'), handPool: { pooled: 3 } });
await host.started;
const config =
  kind === 'ssh'
    ? { type: 'ssh', host: ssh.CORRAL_TEST_SSH_HOST, port: Number(ssh.CORRAL_TEST_SSH_PORT), user: ssh.CORRAL_TEST_SSH_USER, identity_file: ssh.CORRAL_TEST_SSH_KEY, working_dir: 'corral-bench-pool' }
    : { type: 'docker', image: docker.CORRAL_TEST_DOCKER_IMAGE, docker_host: docker.CORRAL_TEST_DOCKER_HOST };
const env = host.environments.create({ name: 'pooled', config: config as never, metadata: {}, description: null }).id;
const session = () => host.log.createSession({ environment_id: env, record: { agent: { model: { id: 'm' }, tools: [{ type: 'agent_toolset_20260401' }] }, resources: [{ type: 'github_repository', url: repoUrl, mount_path: '/workspace/repo' }] } }).session.id;
const pool = () => host.hands.pool.state().find((p) => p.environment_id === env)!;
const until = async (ok: () => boolean) => {
  while (!ok()) await new Promise((r) => setTimeout(r, 50));
};
// Teach the pool the repository, then let it fill.
const first = session();
await host.hands.execute(first, undefined, 'bash', { command: 'true' });
await host.hands.release(first, 'main');
const call = async () => {
  const id = session();
  const t = performance.now();
  const r = await host.hands.execute(id, undefined, 'bash', { command: 'ls' });
  const ms = performance.now() - t;
  const pooled = host.log.getEvents(id, { from: 1, limit: 100 }).some((e) => e.type === 'hand.taken_from_pool');
  return { ms, pooled, id, ok: !r.isError };
};
const quiet: number[] = [];
const busy: number[] = [];
const releasing: number[] = [];
for (let i = 0; i < rounds; i++) {
  await until(() => pool().ready === 3 && pool().provisioning === 0);
  await new Promise((r) => setTimeout(r, 1500));
  const a = await call();
  if (a.pooled) quiet.push(a.ms);
  // Its replacement starts 1 s after the take: a second call once it is being made.
  await until(() => pool().provisioning - (pool().queued ?? 0) > 0);
  await new Promise((r) => setTimeout(r, 500));
  const b = await call();
  if (b.pooled) busy.push(b.ms);
  await host.hands.release(a.id, 'main');
  // A used hand (its container, the repository in it) being removed, as a session ends.
  await until(() => pool().ready >= 2 && pool().provisioning === 0);
  await new Promise((r) => setTimeout(r, 1500));
  const gone = host.hands.release(b.id, 'main');
  await new Promise((r) => setTimeout(r, 50));
  const c = await call();
  if (c.pooled) releasing.push(c.ms);
  await gone;
  await host.hands.release(c.id, 'main');
}
const line = (label: string, xs: number[]) => `${label.padEnd(48)} n ${xs.length}  p50 ${fmt(percentile(xs, 50), 1)} ms  p95 ${fmt(percentile(xs, 95), 1)} ms`;
console.log(`${kind}, ${files} files, ${os.cpus().length} cores, load average ${os.loadavg().map((l) => fmt(l, 2)).join(', ')}`);
console.log(line('pooled first call, nothing being made', quiet));
console.log(line('pooled first call, a replacement being made', busy));
console.log(line('pooled first call, a used hand being removed', releasing));
await host.close();
await fs.promises.rm(scratch, { recursive: true, force: true });
process.exit(0);
