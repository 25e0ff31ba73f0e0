import { fork } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { brainEnvironment } from '../vault/brain-env';
import type { BrainProcess } from './brain-launcher';
import { freshBuiltEntry } from './built-entry';
import { brainExecArgv } from './brain-v8';
import type { BrainChild } from './running-brain';

const here = path.dirname(fileURLToPath(import.meta.url));
const BRAIN_NICENESS = 5;

/** Decided once per host process: the brains' code matches the host's as it was loaded. */
let fromSourceEntry: { entry: string; execArgv: string[] } | undefined;

/**
 * The brain entry: the build beside this file. From source (tsx), the checkout's build when it is
 * not older than any source file (built-entry.ts), else the TypeScript source under tsx.
 */
export function defaultEntry(): { entry: string; execArgv: string[] } {
  if (!import.meta.url.endsWith('.ts')) return { entry: path.join(here, 'brain-entry.js'), execArgv: [] };
  if (!fromSourceEntry) {
    const built = freshBuiltEntry(path.resolve(here, '..'));
    fromSourceEntry = built ? { entry: built, execArgv: [] } : { entry: path.join(here, 'entry.ts'), execArgv: ['--import', 'tsx'] };
  }
  return fromSourceEntry;
}

/** `child_process.fork` of the brain entry for a session. */
export function defaultSpawn(sessionId: string): BrainChild {
  const { entry, execArgv } = defaultEntry();
  return forkBrain(entry, sessionId, execArgv);
}

/** Forks a brain entry file for a session (also used to run the built entry from source). */
export function forkBrain(entry: string, sessionId: string, execArgv: string[] = []): BrainChild {
  // Vault: no secret in a brain's environment (an allowlist, child-env.ts, and no key: its model
  // key is a capability for the host's model proxy, revoked when the brain exits).
  const { env, release } = brainEnvironment(sessionId);
  // Inside Electron, fork runs the Electron binary: make it behave as Node.
  if (process.versions.electron) env.ELECTRON_RUN_AS_NODE = '1';
  const child = fork(entry, [sessionId], {
    execArgv: brainExecArgv(execArgv),
    env,
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    serialization: 'json',
  });
  // Brains run a little below the host: with many sessions busy at once, the host (which every
  // brain waits on for each append and tool call) keeps its turn on the CPU.
  if (child.pid) {
    try {
      os.setPriority(child.pid, BRAIN_NICENESS);
    } catch {
      // Not permitted on this system: equal priority then.
    }
  }
  // Without a listener, an 'error' (a brain that could not start) would be thrown in the host.
  child.on('error', (err) => console.error(`corral: brain of ${sessionId}: ${err.message}`));
  child.once('exit', release).once('close', release);
  return brainChildOf(child);
}

/**
 * The supervisor's handle on a brain process, forked for its session or bound from the pool:
 * messages both ways, one exit report, a kill.
 */
export function brainChildOf(child: BrainProcess): BrainChild {
  return {
    send: (m) => {
      // A brain that has just died may still look connected: the write then fails (EPIPE),
      // which the callback takes instead of an 'error' thrown in the host. Its exit is
      // handled by onExit.
      if (child.connected) child.send(m, () => {});
    },
    onMessage: (l) => child.on('message', l),
    onExit: (l) => {
      let told = false;
      const once = (code: number | null, sig: NodeJS.Signals | null) => {
        if (!told) l(code, sig);
        told = true;
      };
      // Already dead (a pooled brain that died before it was bound): told on the next turn.
      if (child.exitCode !== null || child.signalCode !== null) return void setImmediate(() => once(child.exitCode, child.signalCode));
      child.on('exit', once);
      // A brain that never started gets 'error' then 'close', and no 'exit'.
      child.on('close', once);
    },
    kill: () => child.kill('SIGKILL'),
    get pid() {
      return child.pid;
    },
  };
}
