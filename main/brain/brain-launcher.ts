import { EventEmitter } from 'node:events';
import type net from 'node:net';
import { LauncherProcess } from '../launcher/launcher-process';
import { lineSplitter, toLine } from './json-lines';

export { LAUNCHER_SUPPORTED } from '../launcher/launcher-process';

/**
 * What the host uses of a brain process, whether it forked it (a ChildProcess) or its launcher
 * started it (a LaunchedBrain): messages, pid, exit, signals.
 */
export interface BrainProcess extends Pick<EventEmitter, 'on' | 'once' | 'off' | 'removeAllListeners'> {
  readonly pid?: number;
  readonly exitCode: number | null;
  readonly signalCode: NodeJS.Signals | null;
  readonly connected: boolean;
  send(message: unknown, callback: (error: Error | null) => void): boolean;
  kill(signal?: NodeJS.Signals): boolean;
}

/**
 * Starts brains through the launcher (launcher/entry.ts), so that the host never blocks on a
 * brain's process start. A brain started this way talks to the host over its own socket
 * (newline-delimited JSON), never through the launcher.
 */
export class BrainLauncher {
  private readonly launcher = new LauncherProcess();

  /** Starts `file args` with `env` (niceness set as it starts); its wire is fd 3. */
  spawn(file: string, args: string[], env: NodeJS.ProcessEnv, niceness?: number): LaunchedBrain {
    const brain = new LaunchedBrain();
    let id = 0;
    const sent = this.launcher.request(
      (n) => ((id = n), { t: 'spawn', id: n, file, args, env: { ...env, CORRAL_BRAIN_WIRE: 'fd3' }, ...(niceness !== undefined ? { niceness } : {}) }),
      {
        reply: (m, handle) => {
          if (m.t === 'spawned') brain.spawned(m.pid, handle);
          else if (m.t === 'failed') brain.failed(m.error);
          else if (m.t === 'exit') brain.exited(m.code, m.signal);
        },
        launcherGone: () => brain.launcherGone(),
      },
      (err) => brain.failed(`the brain launcher did not take the request: ${err.message}`),
    );
    if (!sent) setImmediate(() => brain.failed('the brain launcher is stopped'));
    else brain.once('close', () => this.launcher.done(id));
    return brain;
  }

  /** The launcher process's pid, while it runs. */
  get pid(): number | undefined {
    return this.launcher.pid;
  }

  /** Ends the launcher (brains already started keep their sockets and end with their sessions). */
  stop(): void {
    this.launcher.stop();
  }
}

/**
 * A brain the launcher started, seen as a child process: 'message', 'exit' (as the launcher
 * reports it), 'close' (exit reported and socket closed), 'error' (never started). Messages sent
 * before it has started wait for it.
 */
export class LaunchedBrain extends EventEmitter implements BrainProcess {
  pid: number | undefined;
  exitCode: number | null = null;
  signalCode: NodeJS.Signals | null = null;
  private socket?: net.Socket;
  private queue: [unknown, (error: Error | null) => void][] = [];
  private killWith?: NodeJS.Signals;
  private socketClosed = false;
  private exitedYet = false;
  private closedYet = false;
  private orphan = false;

  get connected(): boolean {
    return !this.socketClosed && !this.exitedYet;
  }

  send(message: unknown, callback: (error: Error | null) => void = () => {}): boolean {
    if (!this.connected) {
      setImmediate(() => callback(new Error('the brain is gone')));
      return false;
    }
    if (!this.socket) return void this.queue.push([message, callback]), true;
    return this.socket.write(toLine(message), (err) => callback(err ?? null));
  }

  kill(signal: NodeJS.Signals = 'SIGTERM'): boolean {
    if (this.exitedYet) return false;
    if (this.pid === undefined) {
      // Only the last wish counts (a pause then a resume), except that a kill stays a kill.
      if (this.killWith !== 'SIGKILL') this.killWith = signal;
      return true;
    }
    try {
      process.kill(this.pid, signal);
      return true;
    } catch {
      return false;
    }
  }

  /** @internal The launcher started it: its socket is the wire. */
  spawned(pid: number, socket: net.Socket | undefined): void {
    if (!socket) return this.failed('the brain launcher sent no socket');
    this.pid = pid;
    this.socket = socket;
    socket.setEncoding('utf8');
    socket.on(
      'data',
      lineSplitter(
        (m) => this.emit('message', m),
        // A brain writing other than JSON lines is broken: ended as a crash would be.
        () => this.kill('SIGKILL'),
      ),
    );
    socket.on('error', () => {}).on('end', () => socket.destroy());
    socket.on('close', () => {
      this.socketClosed = true;
      if (this.orphan && !this.exitedYet) this.exited(null, null);
      this.maybeClose();
    });
    for (const [m, cb] of this.queue.splice(0)) this.send(m, cb);
    if (this.killWith) this.kill(this.killWith);
  }

  /** @internal It could not be started. */
  failed(error: string): void {
    if (this.exitedYet || this.pid !== undefined) return;
    this.emit('error', new Error(error));
    this.exitedYet = true;
    this.socketClosed = true;
    for (const [, cb] of this.queue.splice(0)) cb(new Error(error));
    this.maybeClose();
  }

  /** @internal The launcher saw it exit. */
  exited(code: number | null, signal: NodeJS.Signals | null): void {
    if (this.exitedYet) return;
    this.exitedYet = true;
    this.exitCode = code;
    this.signalCode = signal;
    this.emit('exit', code, signal);
    this.maybeClose();
  }

  /** @internal The launcher died: a brain not started fails; one running is gone when its socket closes. */
  launcherGone(): void {
    if (this.pid === undefined) return this.failed('the brain launcher exited before starting the brain');
    this.orphan = true;
    if (this.socketClosed && !this.exitedYet) this.exited(null, null);
  }

  private maybeClose(): void {
    if (this.closedYet || !this.exitedYet || !this.socketClosed) return;
    this.closedYet = true;
    this.emit('close', this.exitCode, this.signalCode);
  }
}
