/**
 * The local hand's shell: one long-lived `bash -i` per hand (shell-session.ts speaks to it), in
 * the sandbox when there is one. It is spawned in a process group of its own, on record in the
 * ledger for its whole life, so that a host killed with SIGKILL leaves nothing behind.
 *
 * In the sandbox (bubblewrap, `--new-session`), the shell leads a process group of its own inside;
 * Ctrl-C goes to that group, found once on the host side under /proc. Killing the outer group
 * (bubblewrap, `--die-with-parent`, its own PID namespace) ends everything inside.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import { PGROUP_TOKEN_VAR, type ProcessGroupLedger } from '../pgroups';
import { SHELL_LAUNCH, type ShellProcess, type StartShell } from '../shell-session';
import { localShellEnv, type SandboxedCommand } from './sandbox';
import { signalGroups, watchSandboxSession } from './sandbox-tree';


/** How the local shell is started, beyond the work folder. */
export interface LocalShellOptions {
  /** The folder the shell is spawned in (it exists). */
  cwd: string;
  /** Variables the environment config sets (on top of the allowlisted ones, see child-env.ts). */
  env?: Record<string, string>;
  /** Wraps the launch command for the sandbox; without it, the shell runs as it is. */
  sandbox?: (command: string) => Promise<SandboxedCommand>;
  /** Where the shell's process group is on record while it lives. */
  ledger?: ProcessGroupLedger;
}

function signalGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch {
    // Already gone.
  }
}

/** The deepest process group led by a descendant of `root` (host pids), read from /proc without blocking. */
async function innerGroup(root: number): Promise<number | undefined> {
  const kids = new Map<number, { pid: number; pgrp: number }[]>();
  for (const name of await fsp.readdir('/proc').catch(() => [] as string[])) {
    if (!/^\d+$/.test(name)) continue;
    const stat = await fsp.readFile(`/proc/${name}/stat`, 'utf8').catch(() => '');
    if (!stat) continue;
    const [, ppid, pgrp] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const list = kids.get(Number(ppid)) ?? [];
    list.push({ pid: Number(name), pgrp: Number(pgrp) });
    kids.set(Number(ppid), list);
  }
  // The deepest leader: inside, bubblewrap's init leads a group (with the runtime's socat
  // relays), and the shell, further down, leads one of its own; Ctrl-C is for the shell's only.
  let found: number | undefined;
  let level = kids.get(root) ?? [];
  while (level.length) {
    const leader = level.find((p) => p.pid === p.pgrp);
    if (leader) found = leader.pid;
    level = level.flatMap((p) => kids.get(p.pid) ?? []);
  }
  return found;
}

/** Starts the hand's shell on this machine. */
export function localShell(o: LocalShellOptions): StartShell {
  return async ({ onOutput, onExit }) => {
    fs.mkdirSync(o.cwd, { recursive: true, mode: 0o700 });
    const launch = o.sandbox ? await o.sandbox(SHELL_LAUNCH) : { file: 'sh', args: ['-c', SHELL_LAUNCH], release: () => {} };
    const token = o.ledger?.newToken();
    const child = spawn(launch.file, launch.args, {
      cwd: o.cwd,
      // An allowlist, never a filtered copy of the host's environment (and no ~/.bashrc: localShellEnv).
      env: { ...localShellEnv(o.env), ...(token ? { [PGROUP_TOKEN_VAR]: token } : {}) },
      detached: true,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const pid = child.pid;
    // On record before anything else can happen, so that a host killed now leaves no orphan
    // (without /proc, as soon as `ps` has told the leader's start time).
    if (pid !== undefined && token) void o.ledger!.record(pid, token);
    // The sandbox's own session (bubblewrap --new-session), which a signal to the outer group
    // never reaches: its socat bridges were seen outliving the outer bwrap. Ended with the shell.
    const sandboxSession = pid !== undefined && o.sandbox ? watchSandboxSession(pid) : undefined;
    let ended = false;
    const end = (why: string) => {
      if (ended) return;
      ended = true;
      launch.release();
      sandboxSession?.end();
      if (pid !== undefined) {
        // Background jobs may outlive the shell in its group: the shell's end is theirs too.
        signalGroup(pid, 'SIGKILL');
        o.ledger?.forget(pid);
      }
      onExit(why);
    };
    child.stdout!.on('data', (c: Buffer) => onOutput(c));
    // The shell's own stderr is /dev/null once started; before that it is only job-control chatter.
    child.stderr!.resume();
    child.stdin!.on('error', () => {});
    child.on('error', (err) => end(`it could not be started: ${err.message}`));
    child.on('exit', (code, sig) => end(sig ? `killed by ${sig}` : `exit code ${code}`));
    if (pid === undefined) {
      await new Promise((r) => setImmediate(r));
      end('it could not be started');
    }
    let target: Promise<number | undefined> | undefined;
    const proc: ShellProcess = {
      write: (data) => {
        if (!ended) child.stdin!.write(data);
      },
      async interrupt() {
        if (ended || pid === undefined) return;
        target ??= o.sandbox && process.platform === 'linux' ? innerGroup(pid) : Promise.resolve(pid);
        signalGroup((await target) ?? pid, 'SIGINT');
      },
      ready() {
        // Found now, while only the shell runs: a command may later start groups of its own.
        if (o.sandbox && process.platform === 'linux') target ??= innerGroup(pid!);
      },
      async kill() {
        if (pid === undefined) return;
        const inner = target ? await target : undefined;
        if (inner) signalGroup(inner, 'SIGKILL');
        // The sandbox's session too, found while the outer bwrap is still its parent.
        signalGroups(sandboxSession?.sessions() ?? [], 'SIGKILL');
        signalGroup(pid, 'SIGKILL');
        if (!ended) await new Promise<void>((r) => child.once('exit', () => r()));
      },
    };
    return proc;
  };
}
