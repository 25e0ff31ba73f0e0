/**
 * Was a command killed for memory? Docker reports each OOM kill in a container as an `oom`
 * event (see watch.ts); Podman (4.3) sends none while the container lives on. So when a command
 * ends with 137 and no event came, the container's own memory cgroup is asked: its `oom_kill`
 * count (cgroup v2 `memory.events`, v1 `memory.oom_control`), read from inside the container.
 * The count starts at 0 with the container; a kill is new when the count has grown since the
 * last look.
 */
import type Docker from 'dockerode';
import { startExec } from './exec';

const READ = ['/bin/sh', '-c', 'cat /sys/fs/cgroup/memory.events /sys/fs/cgroup/memory/memory.oom_control 2>/dev/null'];

/** The look may not hold up the result for long. */
const LOOK_TIMEOUT_MS = 2_000;

export class OomCount {
  private seen = 0;

  constructor(
    private readonly docker: Docker,
    private readonly container: Docker.Container,
  ) {}

  /** True when the container's cgroup has OOM-killed something since the last call. False when it cannot tell. */
  async grew(): Promise<boolean> {
    const out: Buffer[] = [];
    const run = startExec(this.docker, this.container, READ, { onStdout: (c) => out.push(c), onStderr: () => {} });
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<null>((r) => (timer = setTimeout(() => r(null), LOOK_TIMEOUT_MS)));
    const r = await Promise.race([run.done, timeout]);
    clearTimeout(timer);
    if (r === null) run.detach();
    // cat's exit code is 1 (one of the two files is missing): only its output counts.
    const m = r === null || r.error ? null : /^oom_kill (\d+)$/m.exec(Buffer.concat(out).toString('latin1'));
    if (!m) return false;
    const count = Number(m[1]);
    const grew = count > this.seen;
    this.seen = Math.max(this.seen, count);
    return grew;
  }
}
