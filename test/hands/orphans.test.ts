/**
 * Commands a host leaves running when it is killed outright are killed by the next host on the
 * same data folder (main/hands/pgroups.ts), and only those.
 */
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createHost, type Host } from '../../main/host';
import { killOrphanGroups, pgroupDir, PGROUP_TOKEN_VAR } from '../../main/hands/pgroups';
import { tmpDir } from '../helpers/tmp';

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

const sleeping = () => {
  try {
    return execFileSync('pgrep', ['-f', '-x', 'sleep 4.125'], { encoding: 'utf8' }).trim() !== '';
  } catch {
    return false;
  }
};

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
    await new Promise((r) => leader.once('exit', r));
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
});
