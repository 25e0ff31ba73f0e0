/**
 * The launcher: a small process the host forks, which starts processes for it: brains, and the
 * programs the hands run on this machine (git, tar).
 *
 * Why: starting a process from the host blocks the host's event loop until the child has exec'd
 * (libuv waits for it): 10–30 ms on this 2-core VM when idle, 23–163 ms under load, for every
 * process. That stall hit every session, the API and the UI. Here it blocks only this process.
 *
 * A brain gets a socket pair on its fd 3 (`stdio[3] = 'pipe'` is a socket pair on Unix); a run
 * gets pipes on its stdout and stderr. The launcher hands the host's ends to the host over its IPC
 * channel and keeps nothing of them, so no output passes through here. It reports each exit.
 * Host-only: it keeps no secret (each request brings its process's environment, already
 * stripped by the vault or built from allowlists) and does nothing a brain asks.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import type { Socket } from 'node:net';
import os from 'node:os';
import type { LauncherReply, LauncherRequest } from './protocol';

if (!process.send) {
  console.error('corral launcher: start me with fork() from the host');
  process.exit(2);
}

const reply = (m: LauncherReply, handle?: Socket) => {
  if (process.connected) process.send!(m, handle, undefined, () => {});
};

// The host is gone: its brains see their sockets close and leave on their own.
process.on('disconnect', () => process.exit(0));

process.on('message', (message: LauncherRequest) => {
  if (message?.t !== 'spawn' && message?.t !== 'run') return;
  const { id, file, args, env, niceness } = message;
  const run = message.t === 'run';
  let child: ChildProcess;
  try {
    // A run leads a process group of its own, so that ending it ends its helpers too (git's).
    child = spawn(file, args, run ? { env, cwd: message.cwd, stdio: ['ignore', 'pipe', 'pipe'], detached: true } : { env, stdio: ['ignore', 'inherit', 'inherit', 'pipe'] });
  } catch (err) {
    return reply({ t: 'failed', id, error: (err as Error).message, ...errnoCode(err) });
  }
  child.on('error', (err) => reply({ t: 'failed', id, error: err.message, ...errnoCode(err) }));
  if (!child.pid) return;
  if (niceness !== undefined) {
    try {
      os.setPriority(child.pid, niceness);
    } catch {
      // Not permitted here: equal priority then.
    }
  }
  child.on('exit', (code, signal) => reply({ t: 'exit', id, code, signal }));
  // One handle per message: a run's stdout comes with 'spawned', its stderr right after.
  reply({ t: 'spawned', id, pid: child.pid }, handOver(run ? child.stdout : child.stdio[3]));
  if (run) reply({ t: 'stderr', id }, handOver(child.stderr));
});

/**
 * Node starts reading a child's pipe as soon as it makes it, and what it reads between sending
 * the handle and the host's acknowledgement is dropped (a second handle waits for that
 * acknowledgement). Stopped now, in the spawn's own tick, nothing is read here: the host reads all.
 */
function handOver(stream: unknown): Socket {
  const socket = stream as Socket & { _handle?: { reading?: boolean; readStop?: () => number } };
  if (socket._handle?.readStop) {
    socket._handle.reading = false;
    socket._handle.readStop();
  }
  return socket;
}

function errnoCode(err: unknown): { code?: string } {
  const code = (err as NodeJS.ErrnoException).code;
  return typeof code === 'string' ? { code } : {};
}
