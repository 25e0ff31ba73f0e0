import { fork, type ChildProcess } from 'node:child_process';
import type net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { brainBaseEnvironment } from '../vault/brain-env';
import type { LauncherReply, LauncherRequest } from './protocol';

const here = path.dirname(fileURLToPath(import.meta.url));

/** The name of the launcher's program in the build (electron.vite.config.ts). */
const BUILT_LAUNCHER_FILE = 'launcher.js';

/** Where the launcher's program is: the TypeScript source under tsx, or the build's launcher.js. */
function launcherEntry(): { entry: string; execArgv: string[] } {
  const fromSource = import.meta.url.endsWith('.ts');
  return fromSource ? { entry: path.join(here, 'entry.ts'), execArgv: ['--import', 'tsx'] } : { entry: path.join(here, BUILT_LAUNCHER_FILE), execArgv: [] };
}

/** Whether processes can be started by a launcher here (handles passed over IPC: not on Windows). */
export const LAUNCHER_SUPPORTED = process.platform !== 'win32';

/** What a user of the launcher hears about one of its processes. */
export interface LaunchListener {
  reply(m: LauncherReply, handle: net.Socket | undefined): void;
  /** The launcher exited: nothing more will be reported. */
  launcherGone(): void;
}

/**
 * The host's side of the launcher (entry.ts): one small process, forked on first use (again if
 * it dies), which starts processes so that the host never blocks on a process start. Replies are
 * routed to each request's listener by its id.
 */
export class LauncherProcess {
  private proc?: ChildProcess;
  private nextId = 1;
  private readonly listeners = new Map<number, LaunchListener>();
  private stopped = false;

  /**
   * @param holdsHost whether the launcher keeps the host's process alive while idle: a brain
   * pool's does (it is stopped with the host); one shared by the hands does not.
   */
  constructor(private readonly holdsHost = true) {}

  /** Sends a request (its id is given here); false if the launcher is stopped. */
  request(make: (id: number) => LauncherRequest, listener: LaunchListener, onSendError: (err: Error) => void): boolean {
    if (this.stopped) return false;
    const id = this.nextId++;
    this.listeners.set(id, listener);
    const proc = this.process();
    this.updateRef();
    proc.send(make(id), (err) => err && onSendError(err));
    return true;
  }

  /** Forgets a request: its process has ended and been read. */
  done(id: number): void {
    this.listeners.delete(id);
    this.updateRef();
  }

  /** The launcher process's pid, while it runs. */
  get pid(): number | undefined {
    return this.proc?.pid;
  }

  /** Ends the launcher (processes already started keep their pipes and end on their own). */
  stop(): void {
    this.stopped = true;
    this.proc?.kill('SIGKILL');
    this.proc = undefined;
  }

  private updateRef(): void {
    if (this.holdsHost || !this.proc) return;
    if (this.listeners.size > 0) (this.proc.ref(), this.proc.channel?.ref());
    else (this.proc.unref(), this.proc.channel?.unref());
  }

  private process(): ChildProcess {
    if (this.proc && this.proc.connected) return this.proc;
    const { entry, execArgv } = launcherEntry();
    const env = brainBaseEnvironment();
    // Inside Electron, fork runs the Electron binary: make it behave as Node.
    if (process.versions.electron) env.ELECTRON_RUN_AS_NODE = '1';
    const proc = fork(entry, [], { execArgv, env, stdio: ['ignore', 'inherit', 'inherit', 'ipc'], serialization: 'json' });
    this.proc = proc;
    proc.on('error', (err) => console.error(`corral: launcher: ${err.message}`));
    proc.on('message', (m: LauncherReply, handle?: net.Socket) => {
      const listener = this.listeners.get(m.id);
      if (!listener) return void handle?.destroy();
      listener.reply(m, handle);
    });
    proc.once('exit', () => {
      if (this.proc === proc) this.proc = undefined;
      // Processes it had not started yet never will; those running are told apart by their pipes.
      for (const listener of [...this.listeners.values()]) listener.launcherGone();
    });
    return proc;
  }
}
