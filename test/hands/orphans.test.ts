/**
 * Commands a host leaves running when it is killed outright are killed by the next host on the
 * same data folder (main/hands/pgroups.ts), and only those.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createHost, type Host } from '../../main/host';
import { killOrphanGroups, pgroupDir, PGROUP_TOKEN_VAR } from '../../main/hands/pgroups';
import { findTokenCarriers } from '../../main/hands/token-scan';
import { tmpDir } from '../helpers/tmp';
import { isRunning } from '../helpers/processes';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const fixture = path.join(__dirname, '../fixtures/orphan-host.ts');

/** Is any process of the group alive (zombies aside)? */
function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
  } catch {
    return false;
  }
  const ps = spawnSync('ps', ['-eo', 'pgid=,stat='], { encoding: 'utf8' }).stdout;
  return ps.split('\n').some((l) => {
    const [g, stat] = l.trim().split(/\s+/);
    return Number(g) === pgid && !stat!.startsWith('Z');
  });
}

let child: ChildProcess | undefined;
let host: Host | undefined;
afterEach(async () => {
  child?.kill('SIGKILL');
  child = undefined;
  await host?.close();
  host = undefined;
});

const sleeping = () => isRunning('sleep 4.125', true);

describe.runIf(process.platform === 'linux')('a host killed with kill -9 while a local command runs', () => {
  for (const sandbox of ['on', 'off'] as const) {
    it(`leaves no orphan once a host starts again on its data folder (sandbox ${sandbox})`, async () => {
      const dataDir = tmpDir();
      const workRoot = tmpDir('corral-work-');
      const marker = path.join(workRoot, 'written-late.txt');
      child = spawn(process.execPath, ['--import', 'tsx', fixture, dataDir, workRoot, sandbox, `sleep 4.125; echo x > ${marker}`], { stdio: ['ignore', 'pipe', 'inherit'] });
      const line = await new Promise<string>((resolve, reject) => {
        let out = '';
        child!.stdout!.on('data', (d: Buffer) => {
          out += d;
          const m = /RUNNING (\d+) (\S+)/.exec(out);
          if (m) resolve(m[0]);
        });
        child!.once('exit', (code) => reject(new Error(`the fixture host exited (${code}) before its command ran: ${out}`)));
      });
      const pgid = Number(line.split(' ')[1]);
      // The shell is on record from its start; wait until it runs the command.
      for (let i = 0; i < 100 && !sleeping(); i++) await sleep(50);
      expect(sleeping()).toBe(true);
      const recorded = JSON.parse(fs.readFileSync(path.join(pgroupDir(dataDir), `${pgid}.json`), 'utf8'));
      expect(recorded).toMatchObject({ pgid, host_pid: child.pid });

      child.kill('SIGKILL');
      await new Promise((r) => child!.once('exit', r));
      child = undefined;
      await sleep(200);
      // Unsandboxed, the host is gone and its command is not. Sandboxed, bubblewrap dies with its
      // parent (--die-with-parent) and takes the command along; the record is left either way.
      if (sandbox === 'off') expect(groupAlive(pgid)).toBe(true);
      expect(fs.readdirSync(pgroupDir(dataDir))).toEqual([`${pgid}.json`]);

      host = createHost({ dataDir, workRoot });
      await sleep(300);
      expect(groupAlive(pgid)).toBe(false);
      expect(fs.readdirSync(pgroupDir(dataDir))).toEqual([]);
      // Long enough for the command to have written its file, had it lived.
      await sleep(4500);
      expect(fs.existsSync(marker)).toBe(false);
    }, 30_000);
  }
});

/** Lines in a file, 0 when it does not exist. */
const linesIn = (file: string) => (fs.existsSync(file) ? fs.readFileSync(file, 'utf8').split('\n').filter(Boolean).length : 0);

describe.runIf(process.platform === 'linux')('a host killed with kill -9 while a sandboxed command writes every 100 ms', () => {
  it('the restarted host stops the writes and leaves no process of the command, inside the sandbox\'s own session or out', async () => {
    const dataDir = tmpDir();
    const workRoot = tmpDir('corral-work-');
    child = spawn(process.execPath, ['--import', 'tsx', fixture, dataDir, workRoot, 'on', 'while true; do date +%s%N >> ticks.txt; sleep 0.1; done'], { stdio: ['ignore', 'pipe', 'inherit'] });
    const line = await new Promise<string>((resolve, reject) => {
      let out = '';
      child!.stdout!.on('data', (d: Buffer) => {
        out += d;
        const m = /RUNNING (\d+) (\S+)/.exec(out);
        if (m) resolve(m[0]);
      });
      child!.once('exit', (code) => reject(new Error(`the fixture host exited (${code}) before its command ran: ${out}`)));
    });
    const [, pgidText, sessionId] = line.split(' ');
    const pgid = Number(pgidText);
    const { token } = JSON.parse(fs.readFileSync(path.join(pgroupDir(dataDir), `${pgid}.json`), 'utf8')) as { token: string };
    const ticks = path.join(workRoot, sessionId!, 'ticks.txt');
    while (linesIn(ticks) < 3) await sleep(100);
    // The sandbox runs in a session of its own (bubblewrap --new-session): not the recorded group.
    const carriers = findTokenCarriers(PGROUP_TOKEN_VAR, new Set([token]));
    expect(carriers.some((c) => c.sid !== pgid)).toBe(true);

    child.kill('SIGKILL');
    await new Promise((r) => child!.once('exit', r));
    child = undefined;
    host = createHost({ dataDir, workRoot });
    await sleep(300);
    const stopped = linesIn(ticks);
    await sleep(1000); // ten ticks, had it lived
    expect(linesIn(ticks)).toBe(stopped);
    expect(findTokenCarriers(PGROUP_TOKEN_VAR, new Set([token]))).toEqual([]);
    expect(groupAlive(pgid)).toBe(false);
  }, 30_000);
});

describe.runIf(process.platform === 'linux')('orphan records', () => {
  it('never kill a process group that is not the one recorded (a recycled id)', async () => {
    const dataDir = tmpDir();
    const stranger = spawn('sleep', ['30'], { detached: true, stdio: 'ignore' });
    try {
      fs.mkdirSync(pgroupDir(dataDir), { recursive: true });
      // Same id, another start time and no token: a group that reuses the number of one of ours.
      fs.writeFileSync(path.join(pgroupDir(dataDir), `${stranger.pid}.json`), JSON.stringify({ pgid: stranger.pid, start: '1', boot: null, token: 'not-its-token', host_pid: 1, started_at: '' }));
      expect(killOrphanGroups(dataDir)).toEqual([]);
      expect(groupAlive(stranger.pid!)).toBe(true);
      expect(fs.readdirSync(pgroupDir(dataDir))).toEqual([]);
    } finally {
      stranger.kill('SIGKILL');
    }
  });

  it('kill what a dead leader left behind when it still carries the token', async () => {
    const dataDir = tmpDir();
    // The leader starts a member and exits: only the member, with the token, remains.
    const leader = spawn('bash', ['-c', 'sleep 30 & echo $!'], { detached: true, stdio: ['ignore', 'pipe', 'ignore'], env: { PATH: process.env.PATH, [PGROUP_TOKEN_VAR]: 'tok-1' } });
    const memberPid = Number(await new Promise<string>((r) => leader.stdout!.once('data', (d: Buffer) => r(String(d).trim()))));
    if (leader.exitCode === null && leader.signalCode === null) await new Promise((r) => leader.once('exit', r)); // it may be gone already
    try {
      fs.mkdirSync(pgroupDir(dataDir), { recursive: true });
      fs.writeFileSync(path.join(pgroupDir(dataDir), `${leader.pid}.json`), JSON.stringify({ pgid: leader.pid, start: 'gone', boot: null, token: 'tok-1', host_pid: 1, started_at: '' }));
      expect(groupAlive(leader.pid!)).toBe(true);
      expect(killOrphanGroups(dataDir)).toEqual([leader.pid]);
      await sleep(100);
      expect(groupAlive(leader.pid!)).toBe(false);
    } finally {
      try {
        process.kill(memberPid, 'SIGKILL');
      } catch {
        // Already gone, as it should be.
      }
    }
  });

  it('kill what a group left in a session of its own (a sandbox), found by its token, when the leader is gone', async () => {
    const dataDir = tmpDir();
    const out = tmpDir('corral-stray-');
    const ticks = path.join(out, 'ticks.txt');
    // The leader starts a writer in a new session (as bubblewrap --new-session does) and exits:
    // nothing of the recorded group is left, and no parent-death signal links the writer to anything.
    const leader = spawn('bash', ['-c', `setsid bash -c 'while true; do date +%s%N >> ${ticks}; sleep 0.1; done' >/dev/null 2>&1 < /dev/null & echo $!`], {
      detached: true,
      stdio: ['ignore', 'pipe', 'ignore'],
      env: { PATH: process.env.PATH, [PGROUP_TOKEN_VAR]: 'tok-stray' },
    });
    const writerPid = Number(await new Promise<string>((r) => leader.stdout!.once('data', (d: Buffer) => r(String(d).trim()))));
    if (leader.exitCode === null && leader.signalCode === null) await new Promise((r) => leader.once('exit', r)); // it may be gone already
    try {
      while (linesIn(ticks) < 2) await sleep(100);
      expect(groupAlive(leader.pid!)).toBe(false);
      fs.mkdirSync(pgroupDir(dataDir), { recursive: true });
      fs.writeFileSync(path.join(pgroupDir(dataDir), `${leader.pid}.json`), JSON.stringify({ pgid: leader.pid, start: 'gone', boot: null, token: 'tok-stray', host_pid: 1, started_at: '' }));
      killOrphanGroups(dataDir);
      await sleep(200);
      const stopped = linesIn(ticks);
      await sleep(500);
      expect(linesIn(ticks)).toBe(stopped);
      expect(fs.existsSync(`/proc/${writerPid}`) && !/\) [ZX] /.test(fs.readFileSync(`/proc/${writerPid}/stat`, 'utf8'))).toBe(false);
    } finally {
      try {
        process.kill(-writerPid, 'SIGKILL');
      } catch {
        // Already gone, as it should be.
      }
    }
  });
});
