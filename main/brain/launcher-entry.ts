/**
 * The brain launcher: a small process the host forks once, which starts brain processes for it.
 *
 * Why: starting a process from the host blocks the host's event loop until the child has exec'd
 * (libuv waits for it): 10–30 ms on this 2-core VM when idle, 23–163 ms under load, for every
 * brain. That stall hit every session, the API and the UI. Here it blocks only this process.
 *
 * Each brain gets a socket pair on its fd 3 (`stdio[3] = 'pipe'` is a socket pair on Unix); the
 * launcher hands the host's end to the host over its IPC channel and keeps nothing of it, so
 * messages between host and brain never pass through here. It reports each brain's exit.
 * Host-only: it holds no secret (a brain's environment comes with each request, already
 * stripped by the vault) and does nothing a brain asks.
 */
import { spawn } from 'node:child_process';
import os from 'node:os';
import type { LauncherReply, LauncherRequest } from './launcher-protocol';

if (!process.send) {
  console.error('corral brain launcher: start me with fork() from the host');
  process.exit(2);
}

const reply = (m: LauncherReply, handle?: import('node:net').Socket) => {
  if (process.connected) process.send!(m, handle, undefined, () => {});
};

// The host is gone: its brains see their sockets close and leave on their own.
process.on('disconnect', () => process.exit(0));

process.on('message', (message: LauncherRequest) => {
  if (message?.t !== 'spawn') return;
  const { id, file, args, env, niceness } = message;
  let child;
  try {
    child = spawn(file, args, { env, stdio: ['ignore', 'inherit', 'inherit', 'pipe'] });
  } catch (err) {
    return reply({ t: 'failed', id, error: (err as Error).message });
  }
  child.on('error', (err) => reply({ t: 'failed', id, error: err.message }));
  if (!child.pid) return;
  if (niceness !== undefined) {
    try {
      os.setPriority(child.pid, niceness);
    } catch {
      // Not permitted here: equal priority then.
    }
  }
  child.on('exit', (code, signal) => reply({ t: 'exit', id, code, signal }));
  reply({ t: 'spawned', id, pid: child.pid }, child.stdio[3] as import('node:net').Socket);
});
