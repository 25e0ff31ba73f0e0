/**
 * Watching one container: the engine's event stream for it (`die`, `destroy`; `oom` and `kill`
 * give the reason), and the engine itself (a closed event stream, and a ping every second while
 * calls are in flight). Whatever says the container or the engine is gone marks the hand lost.
 *
 * An `oom` event alone does not: the kernel then killed some process in the container (usually
 * the command that used the memory), and the container lives on; its `die` says "out of memory"
 * when that is how it ended.
 */
import type { Readable } from 'node:stream';
import type Docker from 'dockerode';
import { describeConnectError, ping } from './engine';
import type { Lifeline } from './lifeline';

/** Engine checks give up after this long (the lost hand must be noticed well within 5 s). */
const CHECK_TIMEOUT_MS = 3_000;
const WATCHDOG_MS = 1_000;

const SIGNALS: Record<number, string> = { 1: 'SIGHUP', 2: 'SIGINT', 3: 'SIGQUIT', 6: 'SIGABRT', 9: 'SIGKILL', 11: 'SIGSEGV', 15: 'SIGTERM' };

/** Words for how a container ended. */
export function exitReason(code: number, oom: boolean): string {
  const why = oom ? 'out of memory' : code === 137 ? 'killed' : code > 128 && code < 160 ? `killed by ${SIGNALS[code - 128] ?? `signal ${code - 128}`}` : '';
  return `container exited with code ${code}${why ? ` (${why})` : ''}`;
}

interface DockerEvent {
  Type?: string;
  Action?: string;
  status?: string;
  Actor?: { Attributes?: Record<string, string> };
}

export class ContainerWatch {
  private stream: Readable | undefined;
  private stopped = false;
  private failures = 0;
  private lastOom = 0;
  private pinging = false;
  private readonly watchdog: NodeJS.Timeout;

  constructor(
    private readonly docker: Docker,
    private readonly container: Docker.Container,
    private readonly endpoint: string,
    private readonly life: Lifeline,
  ) {
    this.watchdog = setInterval(() => this.tick(), WATCHDOG_MS);
    this.watchdog.unref();
  }

  /** Opens the event stream (resolves once the engine has accepted it). */
  async start(): Promise<void> {
    const stream = (await this.docker.getEvents({ filters: { container: [this.container.id], type: ['container'] } })) as unknown as Readable;
    if (this.stopped) return void stream.destroy();
    this.stream = stream;
    const openedAt = Date.now();
    let buf = '';
    stream.on('data', (chunk: Buffer) => {
      this.failures = 0;
      buf += chunk.toString('utf8');
      let nl: number;
      while ((nl = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, nl).trim();
        buf = buf.slice(nl + 1);
        if (line) this.onEvent(line);
      }
    });
    const ended = () => {
      if (this.stream !== stream) return;
      this.stream = undefined;
      if (Date.now() - openedAt > 10_000) this.failures = 0;
      if (!this.stopped) void this.recover();
    };
    stream.once('end', ended);
    stream.once('close', ended);
    stream.on('error', () => ended());
  }

  /** True when an `oom` event came at or after `since` (ms since the epoch). */
  oomSince(since: number): boolean {
    return this.lastOom >= since;
  }

  /** Whether this engine has sent an `oom` event for the container yet (Podman 4.3 never does while it lives). */
  get sentOom(): boolean {
    return this.lastOom > 0;
  }

  private recentOom(): boolean {
    return Date.now() - this.lastOom < 5_000;
  }

  stop(): void {
    this.stopped = true;
    clearInterval(this.watchdog);
    this.stream?.destroy();
    this.stream = undefined;
  }

  /**
   * Is the container still running? Asks the engine; when the answer is no (or the engine does
   * not answer), marks the hand lost and returns false.
   */
  async check(): Promise<boolean> {
    if (this.life.lostReason !== undefined) return false;
    try {
      const info = await this.container.inspect({ abortSignal: AbortSignal.timeout(CHECK_TIMEOUT_MS) });
      if (info.State.Running) return true;
      const ended = info.State.Status === 'exited' || info.State.Status === 'dead';
      this.life.markLost(ended ? exitReason(info.State.ExitCode, info.State.OOMKilled || this.recentOom()) : `the container is ${info.State.Status}`);
    } catch (err) {
      if ((err as { statusCode?: number }).statusCode === 404) this.life.markLost('the container was removed');
      else this.engineLost(err);
    }
    return false;
  }

  private engineLost(err: unknown): void {
    this.life.markLost(`lost the connection to the Docker engine at ${this.endpoint}: ${describeConnectError(err)}`);
  }

  private onEvent(line: string): void {
    let ev: DockerEvent;
    try {
      ev = JSON.parse(line) as DockerEvent;
    } catch {
      return;
    }
    const action = ev.Action ?? ev.status;
    const attrs = ev.Actor?.Attributes ?? {};
    if (action === 'oom') this.lastOom = Date.now();
    else if (action === 'die') this.life.markLost(exitReason(Number(attrs.exitCode ?? attrs.containerExitCode ?? -1), this.recentOom()));
    // Podman says `remove` where Docker says `destroy`.
    else if (action === 'destroy' || action === 'remove') this.life.markLost('the container was removed');
  }

  /** The event stream ended: the engine went away, or just closed it. */
  private async recover(): Promise<void> {
    if (this.stopped || this.life.lostReason !== undefined) return;
    try {
      await ping(this.docker, CHECK_TIMEOUT_MS);
    } catch (err) {
      return this.engineLost(err);
    }
    if (!(await this.check()) || this.stopped) return;
    if (++this.failures > 5) return this.engineLost(new Error('the engine keeps closing the event stream'));
    await new Promise((r) => setTimeout(r, 100 * this.failures));
    if (this.stopped || this.life.lostReason !== undefined) return;
    await this.start().catch(() => this.recover());
  }

  /** While calls are in flight, an engine that stops answering is a lost hand. */
  private tick(): void {
    if (this.stopped || this.pinging || this.life.inFlight === 0 || this.life.lostReason !== undefined) return;
    this.pinging = true;
    ping(this.docker, CHECK_TIMEOUT_MS)
      .catch((err) => {
        if (!this.stopped) this.engineLost(err);
      })
      .finally(() => (this.pinging = false));
  }
}
