/**
 * A live SSH connection as a RemoteShell: commands in their own process group (killed over a
 * second channel on abort), files over one reused SFTP session, and a single "lost" moment after
 * which every call in flight resolves at once.
 */
import type { Client, ClientChannel, SFTPWrapper } from 'ssh2';
import { RemoteFileError, type ExecOptions, type ExecResult, type RemoteShell } from '../remote/types';
import { killCommand, PgidSniffer, wrapCommand, type HostTools } from './exec-wrapper';
import type { HostKeyInfo } from './known-hosts';
import { sshStartShell } from './persistent';
import { reverseForward } from './reverse-forward';
import { ChannelSlots } from './slots';
import { readRemoteFile, writeRemoteFile } from './sftp-files';
import { writeInPieces } from './stdin-pieces';

/** sshd allows 10 sessions per connection by default (MaxSessions): SFTP takes one, kills one. */
const EXEC_SLOTS = 8;
/** When a channel closes without an exit status, wait this long for the connection's fate. */
const EXIT_GRACE_MS = 100;
/** Channel opens refused for the session limit are retried this often (about 3 s in all). */
const OPEN_RETRIES = 10;
/** An aborted command whose group id never arrives is given up on after this long. */
const PGID_WAIT_MS = 5_000;
/** How long close() waits for the group ids of commands started but not yet reported. */
const CLOSE_PGID_WAIT_MS = 1_500;

export interface SshShellInfo {
  /** `user@host:port`. */
  label: string;
  hostKey: HostKeyInfo;
  /** How long an unanswered link takes to be declared lost (keepalive interval × (count + 1)). */
  keepaliveWindowMs: number;
}

export class SshShell implements RemoteShell {
  /** The key the host offered; `known: false` means it was not in known_hosts (accepted, to be confirmed by the user). */
  readonly hostKey: HostKeyInfo;
  readonly label: string;
  private lost: string | undefined;
  private closed = false;
  private readonly lostListeners: ((reason: string) => void)[] = [];
  /** Calls in flight, told when the connection is gone. */
  private readonly inflight = new Set<(reason: string) => void>();
  /** Process groups of commands that are running. */
  private readonly running = new Set<number>();
  /** Commands whose channel is open and whose process group id has not been read yet: settle when it is (or the channel closes). */
  private readonly groupsComing = new Set<Promise<void>>();
  private readonly slots = new ChannelSlots(EXEC_SLOTS);
  private sftp: Promise<SFTPWrapper> | undefined;
  private tools: HostTools = { setsid: false, bash: false };
  private home_ = '/';
  private workDir_ = '/';

  constructor(
    private readonly client: Client,
    info: SshShellInfo,
  ) {
    this.label = info.label;
    this.hostKey = info.hostKey;
    const window = `${Math.round(info.keepaliveWindowMs / 100) / 10} s`;
    client.on('error', (err: Error & { level?: string; code?: unknown }) => this.markLost(lostReason(err, this.label, window)));
    client.on('end', () => this.markLost(`${this.label} closed the connection (the host or its sshd went away)`));
    client.on('close', () => this.markLost(`the connection to ${this.label} closed`));
  }

  /** The hand's persistent bash (ssh/persistent.ts): one channel kept open. */
  readonly startShell = sshStartShell({
    acquire: () => this.slots.acquire(),
    open: (command, cb) => this.openChannel(command, () => false, cb),
    runPlain: (command) => this.execPlain(command, 3_000),
    watchLost: (fn) => {
      this.inflight.add(fn);
      return () => this.inflight.delete(fn);
    },
    lostReason: () => this.lost,
  });

  /** The host key for the log: its fingerprint, and whether it was known or first seen now. */
  get facts(): Record<string, unknown> {
    const k = this.hostKey;
    return { host_key: { type: k.type, fingerprint: k.fingerprint, known: k.known, first_seen: k.recordedIn !== undefined } };
  }

  /** The remote home folder, found at connect. */
  get home(): string {
    return this.home_;
  }

  /** The work folder on the host (absolute), made at connect. */
  get workDir(): string {
    return this.workDir_;
  }

  get lostReason(): string | undefined {
    return this.lost;
  }

  onLost(listener: (reason: string) => void): void {
    this.lostListeners.push(listener);
  }

  /** Called once by connect: what the host has, its home, and the work folder. */
  init(facts: { tools: HostTools; home: string; workDir: string }): void {
    this.tools = facts.tools;
    this.home_ = facts.home;
    this.workDir_ = facts.workDir;
  }

  /**
   * Runs a command as it is, without the process-group wrapper (for connect's own probes and
   * kills): stdout as text, the exit code.
   */
  execPlain(command: string, timeoutMs = 10_000, evenIfGone = false): Promise<{ stdout: string; stderr: string; exitCode: number | null; lost?: string }> {
    return new Promise((resolve) => {
      if (this.lost && !evenIfGone) return resolve({ stdout: '', stderr: '', exitCode: null, lost: this.lost });
      const out: Buffer[] = [];
      const err: Buffer[] = [];
      let code: number | null = null;
      let settled = false;
      const finish = (lost?: string) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        this.inflight.delete(onLost);
        resolve({ stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8'), exitCode: code, ...(lost ? { lost } : {}) });
      };
      const onLost = (reason: string) => finish(reason);
      this.inflight.add(onLost);
      const timer = setTimeout(() => finish(`no answer to a command within ${timeoutMs} ms`), timeoutMs);
      this.openChannel(command, () => settled, (e, stream) => {
        if (e) {
          err.push(Buffer.from(e.message));
          return finish(this.lost);
        }
        stream.on('data', (d: Buffer) => out.push(d));
        stream.stderr.on('data', (d: Buffer) => err.push(d));
        stream.on('exit', (c: number | null) => (code = c));
        stream.on('close', () => finish(evenIfGone ? undefined : this.lost));
        stream.end();
      });
    });
  }

  async exec(command: string, opts: ExecOptions = {}): Promise<ExecResult> {
    if (this.lost) return { exitCode: null, lost: this.lost };
    if (opts.signal?.aborted) return { exitCode: null, signal: 'TERM' };
    const release = await this.slots.acquire(opts.signal);
    if (this.lost) {
      release?.();
      return { exitCode: null, lost: this.lost };
    }
    if (!release) return { exitCode: null, signal: 'TERM' };
    return new Promise<ExecResult>((resolve) => {
      let settled = false;
      let pgid: number | undefined;
      let killWanted = false;
      let exit: { code: number | null; signal?: string } | undefined;
      let channel: ClientChannel | undefined;
      let released = false;
      /** Settles this command's entry in groupsComing (its group id was read, or its channel closed). */
      let groupSettled: (() => void) | undefined;
      const releaseOnce = () => {
        if (!released) (released = true), release();
      };

      const finish = (r: ExecResult) => {
        if (settled) return;
        settled = true;
        this.inflight.delete(onLost);
        opts.signal?.removeEventListener('abort', onAbort);
        resolve(r);
      };
      const onLost = (reason: string) => {
        finish({ exitCode: null, lost: reason });
        releaseOnce();
      };
      const onAbort = () => {
        finish({ exitCode: null, signal: 'TERM' });
        if (pgid !== undefined) {
          void this.kill([pgid]);
          channel?.close();
        } else {
          killWanted = true;
          // The group id may never come (the command never started): stop waiting eventually.
          setTimeout(() => channel?.close(), PGID_WAIT_MS).unref();
        }
      };
      this.inflight.add(onLost);
      opts.signal?.addEventListener('abort', onAbort, { once: true });
      // Aborted while waiting for a channel slot: start nothing.
      if (opts.signal?.aborted) {
        releaseOnce();
        return finish({ exitCode: null, signal: 'TERM' });
      }

      const emit = (chunk: Buffer, stream: 'stdout' | 'stderr') => {
        if (!settled && chunk.length) opts.onOutput?.(chunk, stream);
      };
      const sniffer = new PgidSniffer(
        (chunk) => emit(chunk, 'stderr'),
        (id) => {
          pgid = id;
          this.running.add(id);
          groupSettled?.();
          if (killWanted) {
            void this.kill([id]);
            channel?.close();
          }
        },
      );

      this.openChannel(wrapCommand(command, opts.cwd ?? this.workDir_, this.tools), () => settled, (err, stream) => {
        if (err) {
          releaseOnce();
          if (this.lost) return finish({ exitCode: null, lost: this.lost });
          emit(Buffer.from(`corral: cannot open an SSH channel on ${this.label}: ${err.message}\n`), 'stderr');
          return finish({ exitCode: null });
        }
        channel = stream;
        if (settled && !killWanted) {
          // Lost meanwhile.
          stream.close();
          return;
        }
        const coming = new Promise<void>((resolve) => (groupSettled = resolve));
        this.groupsComing.add(coming);
        void coming.then(() => this.groupsComing.delete(coming));
        stream.on('data', (d: Buffer) => emit(d, 'stdout'));
        stream.stderr.on('data', (d: Buffer) => sniffer.push(d));
        stream.on('exit', (code: number | null, signal?: string) => {
          exit = { code: code ?? null, ...(signal ? { signal: signal.replace(/^SIG/, '') } : {}) };
        });
        stream.on('close', () => {
          sniffer.flush();
          groupSettled?.();
          releaseOnce();
          if (pgid !== undefined) this.running.delete(pgid);
          if (settled) return;
          if (exit) return finish({ exitCode: exit.code, ...(exit.signal ? { signal: exit.signal } : {}) });
          // No exit status: the connection is probably going; say so if it does.
          setTimeout(() => finish(this.lost ? { exitCode: null, lost: this.lost } : { exitCode: null }), EXIT_GRACE_MS);
        });
        if (opts.stdin?.length) writeInPieces(stream, opts.stdin);
        else stream.end();
      });
    });
  }

  async readFile(path: string, maxBytes: number): Promise<Buffer> {
    return this.guard((sftp) => readRemoteFile(sftp, path, maxBytes));
  }

  async writeFile(path: string, data: Buffer): Promise<void> {
    return this.guard((sftp) => writeRemoteFile(sftp, path, data));
  }

  /** The host's loopback port, forwarded to a port on the remote loopback over this connection. */
  async reachHost(port: number): Promise<{ host: string; port: number } | undefined> {
    if (this.lost !== undefined) return undefined;
    return reverseForward(this.client, port);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const up = this.lost === undefined;
    const coming = [...this.groupsComing];
    // Calls in flight end now (as lost: the hand is gone), then what they started is killed: a
    // command already running whose group id is still on its way is waited for, briefly.
    this.markGone('the hand was closed', false);
    if (coming.length && up) await Promise.race([Promise.all(coming), sleep(CLOSE_PGID_WAIT_MS)]);
    const groups = [...this.running];
    if (groups.length && up) await Promise.race([this.kill(groups, true), sleep(2_000)]);
    await new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        this.client.destroy();
        resolve();
      }, 1_000);
      this.client.once('close', () => {
        clearTimeout(timer);
        resolve();
      });
      try {
        this.client.end();
      } catch {
        this.client.destroy();
      }
    });
  }

  /**
   * Opens an exec channel. sshd caps sessions per connection and frees a closed one a moment
   * after the client sees it close, so "open failed" is retried for a while (callback style, so
   * that listeners are attached before any event of the channel can fire).
   */
  private openChannel(command: string, gaveUp: () => boolean, cb: (err: Error | undefined, stream: ClientChannel) => void): void {
    let attempt = 0;
    const tryOpen = () => {
      this.client.exec(command, (err, stream) => {
        if (err && !this.lost && !gaveUp() && /open failed/i.test(err.message) && attempt < OPEN_RETRIES) {
          attempt++;
          setTimeout(tryOpen, Math.min(20 * 2 ** attempt, 400));
          return;
        }
        cb(err, stream);
      });
    };
    tryOpen();
  }

  /** Kills process groups over a channel of their own; resolves when the TERM has been sent. */
  private kill(groups: number[], evenIfGone = false): Promise<void> {
    for (const g of groups) this.running.delete(g);
    return this.execPlain(killCommand(groups), 3_000, evenIfGone).then(
      () => undefined,
      () => undefined,
    );
  }

  /** Runs a file operation on the shared SFTP session; LOST when the connection goes meanwhile. */
  private guard<T>(op: (sftp: SFTPWrapper) => Promise<T>): Promise<T> {
    if (this.lost) return Promise.reject(new RemoteFileError('LOST', this.lost));
    return new Promise<T>((resolve, reject) => {
      let settled = false;
      const onLost = (reason: string) => {
        if (settled) return;
        settled = true;
        reject(new RemoteFileError('LOST', reason));
      };
      this.inflight.add(onLost);
      this.getSftp()
        .then(op)
        .then(
          (v) => {
            if (settled) return;
            settled = true;
            this.inflight.delete(onLost);
            resolve(v);
          },
          (err: unknown) => {
            if (settled) return;
            settled = true;
            this.inflight.delete(onLost);
            reject(this.lost ? new RemoteFileError('LOST', this.lost) : err);
          },
        );
    });
  }

  private getSftp(): Promise<SFTPWrapper> {
    this.sftp ??= new Promise<SFTPWrapper>((resolve, reject) => {
      this.client.sftp((err, sftp) => {
        if (err) {
          this.sftp = undefined;
          return reject(this.lost ? new RemoteFileError('LOST', this.lost) : new RemoteFileError('OTHER', `SFTP is not available on ${this.label}: ${err.message}`));
        }
        // A closed SFTP session is opened again by the next call.
        sftp.once('close', () => {
          if (this.sftp === current) this.sftp = undefined;
        });
        resolve(sftp);
      });
    });
    const current = this.sftp;
    return current;
  }

  private markLost(reason: string): void {
    this.markGone(reason, !this.closed);
  }

  private markGone(reason: string, notify: boolean): void {
    if (this.lost) return;
    this.lost = reason;
    for (const f of [...this.inflight]) f(reason);
    this.inflight.clear();
    this.slots.drain();
    if (notify) {
      for (const l of this.lostListeners) {
        try {
          l(reason);
        } catch {
          // A listener's failure is its own.
        }
      }
    }
  }
}

function lostReason(err: Error & { level?: string; code?: unknown }, label: string, window: string): string {
  if (/keepalive timeout/i.test(err.message)) return `no answer from ${label} to keepalives for about ${window} (the network link is down or the host hangs)`;
  if (typeof err.code === 'string') return `the connection to ${label} failed (${err.code}: ${err.message})`;
  return `the connection to ${label} failed: ${err.message}`;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
