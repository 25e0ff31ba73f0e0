/**
 * The process groups hands start on this machine, recorded in the data folder while they run
 * (`DATA/run/pgroups/<pgid>.json`), so that a host killed without warning (kill -9, a crash, a
 * power cut of the app) does not leave commands running on after it: the next host on the same
 * data folder kills every group still on record before it starts anything.
 *
 * A process group id is only reused once every process of the old group is gone, but then it
 * may be reused. A record therefore carries the leader's start time (and the boot it belongs
 * to) and a random token that every process of the group inherits in its environment; a group
 * is killed only when its leader is the same process, or, with the leader gone, when a member
 * still carries the token.
 */
import { randomBytes } from 'node:crypto';
import { execFile, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { findTokenCarriers, killCarriers } from './token-scan';

/** The variable that marks the processes of a recorded group. */
export const PGROUP_TOKEN_VAR = 'CORRAL_PGROUP';

interface GroupRecord {
  pgid: number;
  /** The leader's start time (Linux: clock ticks since boot; elsewhere `ps -o lstart`). */
  start: string | null;
  boot: string | null;
  token: string;
  /** The host that started it (for people reading the folder). */
  host_pid: number;
  started_at: string;
}

export const pgroupDir = (dataDir: string) => path.join(dataDir, 'run', 'pgroups');

function bootId(): string | null {
  try {
    return fs.readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
  } catch {
    return null;
  }
}

/** Fields of /proc/<pid>/stat after the command name: state is [0], pgrp [2], starttime [19]. */
function procStat(pid: number): string[] | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined;
  }
}

/** `ps` asked for a process's start time (`lstart`), and its answer (null: no such process). */
const psStartArgs = (pid: number) => ['-o', 'lstart=', '-p', String(pid)];
const psStart = (stdout: string) => stdout.trim() || null;

/** When process `pid` started, in a form that only the same process repeats; null if it is gone. */
function startOf(pid: number): string | null {
  if (process.platform === 'linux') return procStat(pid)?.[19] ?? null;
  // Only at a host's start (killOrphanGroups), before it serves anything.
  const r = spawnSync('ps', psStartArgs(pid), { encoding: 'utf8' });
  return r.status === 0 ? psStart(r.stdout) : null;
}

/**
 * `startOf` for a group a hand has just started, from the host's event loop. Without /proc it
 * asks `ps`, whose start (a fork, 5–15 ms) must not stall every session: it runs asynchronously.
 */
export function startOfLater(pid: number): string | null | Promise<string | null> {
  if (process.platform === 'linux') return startOf(pid);
  return new Promise((resolve) => {
    execFile('ps', psStartArgs(pid), { encoding: 'utf8' }, (err, stdout) => resolve(err ? null : psStart(stdout)));
  });
}

/** Running processes of group `pgid` (Linux; zombies excluded). */
function membersOf(pgid: number): number[] {
  const out: number[] = [];
  let names: string[];
  try {
    names = fs.readdirSync('/proc');
  } catch {
    return out;
  }
  for (const name of names) {
    if (!/^\d+$/.test(name)) continue;
    const f = procStat(Number(name));
    if (f && Number(f[2]) === pgid && f[0] !== 'Z' && f[0] !== 'X') out.push(Number(name));
  }
  return out;
}

function carriesToken(pid: number, token: string): boolean {
  try {
    return fs.readFileSync(`/proc/${pid}/environ`, 'latin1').split('\0').includes(`${PGROUP_TOKEN_VAR}=${token}`);
  } catch {
    return false;
  }
}

/** Is the recorded group still the one we started? */
function stillOurs(rec: GroupRecord): boolean {
  const boot = bootId();
  if (rec.boot && boot && rec.boot !== boot) return false; // the machine restarted: nothing of ours runs
  if (rec.start !== null && startOf(rec.pgid) === rec.start) return true;
  if (process.platform !== 'linux') return false;
  // The leader is gone; members it left behind still carry the token.
  return membersOf(rec.pgid).some((pid) => carriesToken(pid, rec.token));
}

/** The groups hands of one host start, on record while they run. */
export class ProcessGroupLedger {
  /** Groups whose leader's start time is still being asked for (no /proc); `forget` takes a group out, and its record is then not written. */
  private readonly asking = new Map<number, object>();

  /** `startTime` is for tests: how the leader's start time is found (default: startOfLater). */
  constructor(
    private readonly dir: string,
    private readonly startTime: (pid: number) => string | null | Promise<string | null> = startOfLater,
  ) {}

  /** A token for a group about to start: put it in its environment as PGROUP_TOKEN_VAR. */
  newToken(): string {
    return randomBytes(12).toString('hex');
  }

  /**
   * Records a group just started (its leader is `pgid`). Never throws: a failure is reported.
   * Where the start time takes a child process to find, the record is written once it is known
   * (resolves then), unless the group was forgotten meanwhile.
   */
  record(pgid: number, token: string): Promise<void> {
    const write = (start: string | null) => {
      const rec: GroupRecord = { pgid, start, boot: bootId(), token, host_pid: process.pid, started_at: new Date().toISOString() };
      try {
        fs.mkdirSync(this.dir, { recursive: true, mode: 0o700 });
        fs.writeFileSync(path.join(this.dir, `${pgid}.json`), JSON.stringify(rec), { mode: 0o600 });
      } catch (err) {
        console.error(`corral: could not record process group ${pgid}: ${(err as Error).message}`);
      }
    };
    const start = this.startTime(pgid);
    if (!(start instanceof Promise)) return Promise.resolve(write(start));
    const ask = {};
    this.asking.set(pgid, ask);
    return start.then(
      (s) => {
        if (this.asking.get(pgid) !== ask) return; // forgotten meanwhile (or the id started again)
        this.asking.delete(pgid);
        write(s);
      },
      (err: unknown) => console.error(`corral: could not record process group ${pgid}: ${err instanceof Error ? err.message : String(err)}`),
    );
  }

  /** The group has ended (or was killed and is gone). */
  forget(pgid: number): void {
    this.asking.delete(pgid);
    fs.rmSync(path.join(this.dir, `${pgid}.json`), { force: true });
  }
}

/**
 * Kills every recorded group a previous host left running (and forgets every record). Call at
 * host start, while holding the data folder's lock. Returns the groups killed.
 */
export function killOrphanGroups(dataDir: string): number[] {
  const dir = pgroupDir(dataDir);
  let names: string[];
  try {
    names = fs.readdirSync(dir);
  } catch {
    return [];
  }
  const killed: number[] = [];
  const tokens = new Set<string>();
  const boot = bootId();
  for (const name of names) {
    const file = path.join(dir, name);
    try {
      const rec = JSON.parse(fs.readFileSync(file, 'utf8')) as GroupRecord;
      // Records from an earlier boot name nothing that still runs.
      if (typeof rec.token === 'string' && rec.token !== '' && !(rec.boot && boot && rec.boot !== boot)) tokens.add(rec.token);
      if (Number.isInteger(rec.pgid) && rec.pgid > 1 && stillOurs(rec)) {
        process.kill(-rec.pgid, 'SIGKILL');
        killed.push(rec.pgid);
      }
    } catch {
      // Unreadable record, or the group went away meanwhile.
    }
    fs.rmSync(file, { force: true });
  }
  // What the groups left in other groups and sessions (a sandbox's own session): found by token.
  const strays = killCarriers(findTokenCarriers(PGROUP_TOKEN_VAR, tokens));
  if (killed.length > 0) console.warn(`corral: killed ${killed.length} process group(s) left running by a previous host: ${killed.join(', ')}`);
  if (strays.length > 0) console.warn(`corral: killed ${strays.length} process(es) a previous host's commands left outside their groups (sandboxes): ${strays.join(', ')}`);
  return killed;
}
