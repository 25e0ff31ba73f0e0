import { randomBytes } from 'node:crypto';
import path from 'node:path/posix';
import { AdbServerClient, AdbSyncError, type Adb, type AdbShellProtocolProcess, type AdbSync } from '@yume-chan/adb';
import type { ReadableStream } from '@yume-chan/stream-extra';
import { shq } from '../remote/shell-hand';
import { RemoteFileError, stdinPieces, type ExecOptions, type ExecResult, type RemoteShell } from '../remote/types';
import { formatAddress, type ServerAddress } from './config';
import { readDeviceFile, syncErrorToFileError, writeDeviceFile } from './files';
import { adbStartShell } from './persistent';
import { AdbReverseForwards } from './reverse';
import { ALL_STATES, listDevices, type AdbDevice } from './server';

/** How often the device list is polled, besides the server's push notifications. */
const POLL_MS = 2_000;
/** Commands longer than this go to the device as a script file (the service name is limited to 64 KiB). */
const MAX_INLINE_COMMAND = 16 * 1024;
/** After the exit status, how long the last output may take to drain. */
const OUTPUT_DRAIN_MS = 1_000;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * A connection to one Android device through the adb server: commands over shell protocol v2
 * (stdout and stderr apart, exit codes), files over sync, and a watch on the device's transport.
 * A device that goes offline or disappears from the server makes the shell lost, and every call
 * in flight then ends at once.
 */
export class AdbShell implements RemoteShell {
  lostReason: string | undefined;
  private closed = false;
  private readonly listeners: ((reason: string) => void)[] = [];
  /** Calls in flight: each ends itself when told the hand is gone. */
  private readonly inflight = new Set<(reason: string) => void>();
  private readonly stops: (() => void)[] = [];
  /** Ports on the device that lead to the host's proxies (adb reverse), removed at close. */
  private readonly reverse: AdbReverseForwards;

  constructor(
    readonly client: AdbServerClient,
    readonly adb: Adb,
    readonly device: AdbDevice,
    readonly addr: ServerAddress,
    /** The work folder on the device, made at connect. */
    readonly workDir: string,
  ) {
    this.reverse = new AdbReverseForwards(adb, addr, device.serial);
  }

  /**
   * A port on this machine's loopback (the git or egress proxy) as the device reaches it: a port
   * on the device's loopback, through adb reverse forwarding (reverse.ts). Rejects saying why
   * when the device cannot (old adbd over Wi-Fi, an adb server on another machine).
   */
  async reachHost(port: number): Promise<{ host: string; port: number } | undefined> {
    if (this.lostReason || this.closed) return undefined;
    return this.reverse.reach(port);
  }

  /** For `hand.ready`: whether the device reaches the host's proxies, and if not, why. */
  get facts(): Record<string, unknown> | undefined {
    if (this.reverse.problem) return { reverse_forwarding: { ok: false, error: this.reverse.problem } };
    return this.reverse.count > 0 ? { reverse_forwarding: { ok: true, forwards: this.reverse.count } } : undefined;
  }

  /** The hand's persistent bash (adb/persistent.ts): one shell stream kept open. */
  get startShell() {
    return adbStartShell(this);
  }

  /** Where long commands are staged as script files: next to the work folder (/data/local/tmp by default). */
  private get scratchDir(): string {
    return path.dirname(this.workDir);
  }

  get serial(): string {
    return this.device.serial;
  }
  get model(): string | undefined {
    return this.adb.banner.model ?? this.device.model;
  }
  /** `serial (model)`, for people. */
  get name(): string {
    return this.model ? `${this.serial} (${this.model})` : this.serial;
  }

  // --- the watch ------------------------------------------------------------------------------

  /** Starts watching the transport: the server's wait-for-disconnect, its device-list feed, and a poll. */
  startWatching(): void {
    const serial = this.serial;
    this.adb.disconnected.then(
      () => this.markLost(`device ${serial} disconnected from the adb server`),
      (err: unknown) => this.markLost(`lost contact with the adb server at ${formatAddress(this.addr)} (${errText(err)})`),
    );

    let trackStream: Awaited<ReturnType<AdbServerClient['createConnection']>> | undefined;
    void (async () => {
      try {
        trackStream = await this.client.createConnection('host:track-devices-l', { unref: true });
        if (this.closed || this.lostReason) return void trackStream.dispose().catch(() => {});
        for (;;) {
          const list = await trackStream.readString();
          this.judge(AdbServerClient.parseDeviceList(list, ALL_STATES));
          if (this.lostReason || this.closed) return;
        }
      } catch (err) {
        if (!this.closed && !this.lostReason) this.markLost(`lost contact with the adb server at ${formatAddress(this.addr)} (${errText(err)})`);
      }
    })();
    this.stops.push(() => void trackStream?.dispose().catch(() => {}));

    const timer = setInterval(() => void this.checkNow(), POLL_MS);
    timer.unref();
    this.stops.push(() => clearInterval(timer));
  }

  /** Looks at a device list and marks the shell lost when our device is not there and online. */
  private judge(devices: readonly AdbDevice[]): string | undefined {
    const serial = this.serial;
    const now = devices.find((d) => d.serial === serial);
    let reason: string | undefined;
    if (!now) reason = `device ${serial} disappeared from the adb server`;
    else if (now.state !== 'device') reason = `device ${serial} went ${now.state}`;
    else if (now.transportId !== this.device.transportId) reason = `device ${serial} reconnected (a new transport); this connection to it is gone`;
    if (reason) this.markLost(reason);
    return this.lostReason;
  }

  /** Asks the server now; returns the lost reason if the device is gone. */
  private async checkNow(): Promise<string | undefined> {
    if (this.lostReason || this.closed) return this.lostReason;
    try {
      return this.judge(await listDevices(this.client, this.addr));
    } catch (err) {
      if (!this.closed) this.markLost(`lost contact with the adb server at ${formatAddress(this.addr)} (${errText(err)})`);
      return this.lostReason;
    }
  }

  /**
   * After a stream ended without its exit status: is the device gone? The server may take a
   * moment to mark a dead transport, so look a few times before calling it a plain kill.
   */
  private async confirmLost(): Promise<string | undefined> {
    for (let i = 0; i < 4; i++) {
      const reason = await this.checkNow();
      if (reason || this.closed) return reason;
      await sleep(300);
    }
    return undefined;
  }

  private markLost(reason: string): void {
    if (this.lostReason || this.closed) return;
    this.lostReason = reason;
    this.stopWatching();
    for (const end of [...this.inflight]) end(reason);
    for (const l of this.listeners) {
      try {
        l(reason);
      } catch {
        /* a listener's problem is not ours */
      }
    }
    void Promise.resolve(this.adb.close()).catch(() => {});
  }

  private stopWatching(): void {
    for (const stop of this.stops.splice(0)) stop();
  }

  onLost(listener: (reason: string) => void): void {
    if (this.lostReason) {
      const reason = this.lostReason;
      queueMicrotask(() => listener(reason));
      return;
    }
    this.listeners.push(listener);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.stopWatching();
    for (const end of [...this.inflight]) end('the connection to the device was closed');
    // The forwards live in the device's adbd, not in this connection: removed first (a device
    // that is gone took them with its transport).
    if (!this.lostReason) await this.reverse.removeAll();
    // Closing the transport closes every stream; the device kills their commands.
    await Promise.resolve(this.adb.close()).catch(() => {});
  }

  // --- commands -------------------------------------------------------------------------------

  async exec(command: string, opts: ExecOptions = {}): Promise<ExecResult> {
    if (this.lostReason) return { exitCode: null, lost: this.lostReason };
    if (this.closed) return { exitCode: null, lost: 'the connection to the device was closed' };
    if (opts.signal?.aborted) return { exitCode: null };
    const shell = this.adb.subprocess.shellProtocol;
    if (!shell?.isSupported) throw new Error(`device ${this.serial} does not speak shell protocol v2`);

    // `sh -c` cannot take a NUL, and the device would cut the service name at the first one.
    let script = (opts.cwd ? `cd ${shq(opts.cwd)} || exit 1\n${command}` : command).replace(/\0/g, '');
    if (Buffer.byteLength(script) > MAX_INLINE_COMMAND) {
      // Too long for a service name: stage it as a file that removes itself.
      const file = path.join(this.scratchDir, `.corral-exec-${randomBytes(6).toString('hex')}.sh`);
      try {
        await this.writeFile(file, Buffer.from(script));
      } catch (err) {
        if (err instanceof RemoteFileError && err.code === 'LOST') return { exitCode: null, lost: err.message };
        opts.onOutput?.(Buffer.from(`adb: cannot stage the command on the device: ${errText(err)}\n`), 'stderr');
        return { exitCode: null };
      }
      script = `f=${shq(file)}; sh "$f"; rc=$?; rm -f "$f"; exit $rc`;
    }

    return new Promise<ExecResult>((resolve) => {
      let done = false;
      let proc: AdbShellProtocolProcess | undefined;
      const kill = () => {
        if (proc) void Promise.resolve(proc.kill()).catch(() => {});
      };
      const finish = (r: ExecResult) => {
        if (done) return;
        done = true;
        this.inflight.delete(onGone);
        opts.signal?.removeEventListener('abort', onAbort);
        resolve(r);
      };
      const onGone = (reason: string) => {
        kill();
        finish({ exitCode: null, lost: reason });
      };
      // Closing the stream makes the device hang up the command's process group (SIGHUP).
      const onAbort = () => {
        kill();
        finish({ exitCode: null, signal: 'HUP' });
      };
      this.inflight.add(onGone);
      opts.signal?.addEventListener('abort', onAbort, { once: true });
      if (opts.signal?.aborted) return onAbort(); // while the command was being staged

      void (async () => {
        try {
          proc = await shell.spawn([script]);
        } catch (err) {
          const reason = await this.confirmLost();
          if (reason) return finish({ exitCode: null, lost: reason });
          opts.onOutput?.(Buffer.from(`adb: the device refused the command: ${errText(err)}\n`), 'stderr');
          return finish({ exitCode: null });
        }
        if (done) return kill(); // aborted or lost while the stream opened

        const writer = proc.stdin.getWriter();
        void (async () => {
          for (const piece of stdinPieces(opts.stdin)) if (piece.length) await writer.write(new Uint8Array(piece.buffer, piece.byteOffset, piece.length));
          await writer.close();
        })().catch(() => {});

        const pump = async (from: ReadableStream<Uint8Array>, name: 'stdout' | 'stderr') => {
          const reader = from.getReader();
          for (;;) {
            const { done: end, value } = await reader.read();
            if (end) return;
            if (!done && value.length) opts.onOutput?.(Buffer.from(value), name);
          }
        };
        const drained = Promise.all([pump(proc.stdout, 'stdout'), pump(proc.stderr, 'stderr')]).catch(() => {});

        let code: number;
        try {
          code = await proc.exited;
        } catch {
          // The stream ended without an exit status: the device went away, or its adbd dropped us.
          if (done) return;
          const reason = await this.confirmLost();
          return finish(reason ? { exitCode: null, lost: reason } : { exitCode: null });
        }
        // Everything before the exit packet is already queued; let the readers hand it over.
        let timer: NodeJS.Timeout | undefined;
        await Promise.race([drained, new Promise((r) => (timer = setTimeout(r, OUTPUT_DRAIN_MS)))]);
        clearTimeout(timer);
        finish({ exitCode: code });
      })();
    });
  }

  // --- files ----------------------------------------------------------------------------------

  readFile(file: string, maxBytes: number): Promise<Buffer> {
    return this.withSync((sync) => readDeviceFile(sync, file, maxBytes));
  }

  writeFile(file: string, data: Buffer): Promise<void> {
    return this.withSync((sync) => writeDeviceFile(sync, file, data));
  }

  /** Runs one sync session; ends with LOST at once if the device goes away meanwhile. */
  private async withSync<T>(fn: (sync: AdbSync) => Promise<T>): Promise<T> {
    if (this.lostReason) throw new RemoteFileError('LOST', this.lostReason);
    if (this.closed) throw new RemoteFileError('LOST', 'the connection to the device was closed');
    let sync: AdbSync | undefined;
    let end: (reason: string) => void = () => {};
    const gone = new Promise<never>((_, reject) => {
      end = (reason) => reject(new RemoteFileError('LOST', reason));
    });
    gone.catch(() => {});
    this.inflight.add(end);
    const work = (async () => {
      sync = await this.adb.sync();
      return await fn(sync);
    })();
    work.catch(() => {});
    try {
      return await Promise.race([work, gone]);
    } catch (err) {
      if (err instanceof RemoteFileError) throw err;
      // The device answered FAIL: it is there, and said what went wrong.
      if (err instanceof AdbSyncError) throw syncErrorToFileError(err);
      // The stream broke: is the device gone?
      const reason = this.lostReason ?? (await this.confirmLost());
      if (reason) throw new RemoteFileError('LOST', reason);
      throw new RemoteFileError('OTHER', errText(err));
    } finally {
      this.inflight.delete(end);
      if (sync) void sync.dispose().catch(() => {});
    }
  }
}

function errText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
