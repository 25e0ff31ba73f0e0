/**
 * The RemoteShell of one container: commands through exec (wrapped so an abort can kill their
 * process group), files through exec, the hand lost when the container dies or the engine goes,
 * and close() removing the container.
 */
import type Docker from 'dockerode';
import type { ExecOptions, ExecResult, RemoteShell } from '../remote/types';
import { removeContainer } from './container-records';
import { describeConnectError } from './engine';
import { GatewayForwards, gatewayOf } from './gateway-forward';
import { startExec, type RawOutcome } from './exec';
import { readFileVia, writeFileVia, type Collected } from './files';
import type { Lifeline } from './lifeline';
import { OomCount } from './oom';
import { dockerStartShell } from './persistent';
import { killCommand, PgidFilter, wrappedCommand } from './process-group';
import { ContainerWatch } from './watch';

/** After an abort, the call resolves within this long even if the command has not ended yet. */
const ABORT_SETTLE_MS = 350;
/** How long an odd ending waits for the container's `die` before asking the engine. */
const DIE_GRACE_MS = 250;
/** Bounds the engine's part of close(). */
const CLOSE_TIMEOUT_MS = 10_000;

export class DockerShell implements RemoteShell {
  private closing: Promise<void> | undefined;
  private readonly oom: OomCount;
  private readonly forwards = new GatewayForwards();

  constructor(
    private readonly docker: Docker,
    readonly container: Docker.Container,
    readonly endpoint: string,
    private readonly watch: ContainerWatch,
    private readonly life: Lifeline,
    /** Told once the engine has removed the container (or said it was gone). */
    private readonly onRemoved?: () => Promise<void>,
  ) {
    this.oom = new OomCount(docker, container);
  }

  /** The hand's persistent bash (docker/persistent.ts): one exec kept attached. */
  get startShell() {
    return dockerStartShell(this.docker, this.container, this.life);
  }

  get lostReason(): string | undefined {
    return this.life.lostReason;
  }

  onLost(listener: (reason: string) => void): void {
    this.life.onLost(listener);
  }

  async exec(command: string, opts: ExecOptions = {}): Promise<ExecResult> {
    if (this.life.lostReason !== undefined) return { exitCode: null, lost: this.life.lostReason };
    if (opts.signal?.aborted) return { exitCode: null, signal: 'TERM' };
    const started = Date.now();
    // Nothing is passed on once the call has settled (after an abort the stream is read a little longer).
    let settled = false;
    const output = (c: Buffer, s: 'stdout' | 'stderr') => settled || opts.onOutput?.(c, s);
    const stderr = new PgidFilter((c) => output(c, 'stderr'));
    const run = startExec(this.docker, this.container, wrappedCommand(command, { drainStdin: opts.stdin !== undefined }), {
      cwd: opts.cwd,
      stdin: opts.stdin,
      onStdout: (c) => output(c, 'stdout'),
      onStderr: (c) => stderr.write(c),
    });
    let aborted = false;
    let resolveWork!: (r: ExecResult) => void;
    const work = new Promise<ExecResult>((resolve) => (resolveWork = resolve));
    const onAbort = () => {
      aborted = true;
      run.preventStart();
      // Stop listening only once the group is killed (or there was none), so its id is not missed.
      void this.killGroup(stderr.pgid).finally(() => run.detach());
      setTimeout(() => resolveWork({ exitCode: null, signal: 'TERM' }), ABORT_SETTLE_MS);
    };
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    void run.done.then(async (r) => {
      stderr.end();
      resolveWork(aborted ? { exitCode: null, signal: 'TERM' } : await this.judge(r, started, opts));
    });
    try {
      return await this.life.guard(work, (lost) => ({ exitCode: null, lost }), () => run.detach());
    } finally {
      settled = true;
      opts.signal?.removeEventListener('abort', onAbort);
    }
  }

  async readFile(path: string, maxBytes: number): Promise<Buffer> {
    return readFileVia((cmd, o) => this.collect(cmd, o), path, maxBytes);
  }

  async writeFile(path: string, data: Buffer): Promise<void> {
    return writeFileVia((cmd, o) => this.collect(cmd, o), path, data);
  }

  /**
   * A container on the host's network reaches this machine's loopback as its own; one on a
   * bridge network through a forwarder on its gateway address (gateway-forward.ts); `none` has
   * only its own loopback and cannot.
   */
  async reachHost(port: number): Promise<{ host: string; port: number } | undefined> {
    const info = await this.container.inspect().catch(() => undefined);
    if (info?.HostConfig?.NetworkMode === 'host') return { host: '127.0.0.1', port };
    const gateway = gatewayOf(info);
    return gateway && this.life.lostReason === undefined ? this.forwards.reach(gateway, port) : undefined;
  }

  /** Removes the container (forced: it is killed if running). Never rejects; bounded in time. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      this.life.markClosed();
      this.watch.stop();
      this.forwards.close();
      // An engine that is gone keeps the container on record: the next host start removes it.
      if ((await removeContainer(this.container, CLOSE_TIMEOUT_MS)).gone) await this.onRemoved?.();
    })();
    return this.closing;
  }

  /** Turns a finished exec into a result; an odd ending (engine error, death by signal) is checked against the container's state. */
  private async judge(r: RawOutcome, started: number, opts: ExecOptions): Promise<ExecResult> {
    // Killed, or no exit code: perhaps the container died under the command. The engine may still
    // call it running for a moment, so give its `die` a moment to arrive before asking.
    const odd = r.error !== undefined || r.exitCode === null || r.exitCode >= 128;
    if (odd) {
      await this.life.lostWithin(DIE_GRACE_MS);
      if (!(await this.watch.check())) return { exitCode: null, lost: this.life.lostReason ?? 'the container is gone' };
    }
    if (r.error) {
      opts.onOutput?.(Buffer.from(`[the Docker engine refused the command: ${describeConnectError(r.error)}]\n`), 'stderr');
      return { exitCode: null };
    }
    if (r.exitCode === 137 && opts.onOutput && (await this.killedForMemory(started))) {
      opts.onOutput(Buffer.from('[killed: the container ran out of memory]\n'), 'stderr');
    }
    return { exitCode: r.exitCode };
  }

  /** An engine that sends `oom` events (Docker) is believed; one that never has (Podman) is checked in the cgroup. */
  private async killedForMemory(started: number): Promise<boolean> {
    if (this.watch.oomSince(started)) return true;
    return !this.watch.sentOom && (await this.oom.grew());
  }

  /** Kills the command's process group inside the container (TERM, then KILL a second later). */
  private async killGroup(pgid: Promise<number | null>): Promise<void> {
    const timeout = new Promise<null>((r) => setTimeout(() => r(null), 5_000).unref());
    const id = await Promise.race([pgid, timeout]);
    if (id === null || this.life.lostReason !== undefined) return;
    const killer = startExec(this.docker, this.container, killCommand(id), { onStdout: () => {}, onStderr: () => {} });
    await killer.done;
  }

  /** Runs an argv to the end, keeping its output; settles as lost when the hand goes. */
  private async collect(cmd: string[], o: { stdin?: Buffer; maxStdout?: number }): Promise<Collected> {
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let stdoutBytes = 0;
    const max = o.maxStdout ?? Infinity;
    const result = (r: Partial<Collected>): Collected => ({
      exitCode: null,
      ...r,
      stdout: Buffer.concat(out),
      stdoutBytes,
      stderr: Buffer.concat(err).toString('utf8'),
    });
    if (this.life.lostReason !== undefined) return result({ lost: this.life.lostReason });
    const started = Date.now();
    const run = startExec(this.docker, this.container, cmd, {
      stdin: o.stdin,
      onStdout: (c) => {
        if (stdoutBytes < max) out.push(c.subarray(0, max - stdoutBytes));
        stdoutBytes += c.length;
      },
      onStderr: (c) => err.push(c),
    });
    const work = run.done.then(async (r) => {
      const judged = await this.judge(r, started, {});
      return result(judged.lost ? { lost: judged.lost } : { exitCode: r.exitCode, error: r.error });
    });
    return this.life.guard(work, (lost) => result({ lost }), () => run.detach());
  }
}
