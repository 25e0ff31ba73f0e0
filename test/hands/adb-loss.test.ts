/**
 * The adb hand losing its device (and the adb server), through the REAL adb server (a private one on port 15037) and test devices of our own that
 * speak adb's transport protocol (test/fixtures/adb-device.ts), all started by test/hands-env/adb.sh
 * (run as root; needs `apt-get install adb`); setup in test/helpers/adb-backend.ts.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { createShellHand } from '../../main/hands/remote/shell-hand';
import { script, env, serial2, workDir, shell, sleep, connect, run, adbCli, deviceProcesses, uniqueToken, ownCommand, useAdbBackend } from '../helpers/adb-backend';

useAdbBackend();

describe('the adb hand: a device that dies', () => {
  it('is lost within 5 s with every call ended, and a new connect works once it is back', async () => {
    const s2 = await connect({ serial: serial2 });
    const h2 = createShellHand(s2, { workDir, label: 'dying' });
    const reasons: string[] = [];
    s2.onLost((r) => reasons.push(r));
    const token = uniqueToken();
    const exec = run(s2, `echo started; sleep 6.${token}; echo never`);
    const tool = h2.execute('bash', { command: `sleep 7.${token}` });
    await sleep(400);
    const pid = Number(fs.readFileSync(env.CORRAL_TEST_ADB_PIDFILE2!, 'utf8'));
    const t0 = Date.now();
    process.kill(pid, 'SIGKILL');

    const res = await exec;
    expect(Date.now() - t0).toBeLessThan(5_000);
    expect(res).toMatchObject({ exitCode: null, lost: expect.stringContaining(serial2) });
    expect(res.stdout).toBe('started\n');
    const out = await tool;
    expect(out.isError).toBe(true);
    expect(out.content).toMatch(/\[the hand was lost: .*127\.0\.0\.1:6556/);
    expect(Date.now() - t0).toBeLessThan(5_000);
    expect(reasons).toHaveLength(1);
    expect(s2.lostReason).toBe(reasons[0]);
    // After that, every call ends at once.
    expect(await run(s2, 'echo x')).toMatchObject({ exitCode: null, lost: reasons[0] });
    await expect(s2.readFile(`${workDir}/x`, 10)).rejects.toMatchObject({ code: 'LOST' });
    await expect(s2.writeFile(`${workDir}/x`, Buffer.from('x'))).rejects.toMatchObject({ code: 'LOST' });
    expect(await h2.execute('read', { file_path: 'x' })).toMatchObject({ isError: true, content: expect.stringMatching(/is gone/) });
    // A late listener still hears it.
    const late = await new Promise<string>((r) => s2.onLost(r));
    expect(late).toBe(reasons[0]);
    // While it is dead, connecting says so.
    await expect(connect({ serial: serial2 })).rejects.toThrow(/127\.0\.0\.1:6556.*(offline|no device)|no device with serial '127\.0\.0\.1:6556'/);
    // The other device did not notice.
    expect((await run(shell, 'echo alive')).stdout).toBe('alive\n');
    expect(shell.lostReason).toBeUndefined();

    // Back: the daemon restarts and the server reconnects it (disconnect + connect).
    execFileSync('bash', [script, 'revive', '6556'], { stdio: ['ignore', 'ignore', 'inherit'], timeout: 60_000 });
    const again = await connect({ serial: serial2 });
    expect(await run(again, 'echo back')).toMatchObject({ exitCode: 0, stdout: 'back\n' });
    expect(again.lostReason).toBeUndefined();
    await again.close();
    // A pulled cable leaves the dead daemon's commands running here; end them by pid.
    const ps = execFileSync('ps', ['-eo', 'pid=,args='], { encoding: 'utf8' });
    for (const m of ps.matchAll(/^\s*(\d+)\s+(.*)$/gm)) {
      if (!ownCommand(token).test(m[2]!) || m[2]!.startsWith('ps ')) continue;
      try {
        process.kill(Number(m[1]), 'SIGKILL');
      } catch {
        /* it ended meanwhile */
      }
    }
  });

  it('is lost when the device leaves the server (adb disconnect), and when the adb server itself dies', async () => {
    const s2 = await connect({ serial: serial2 });
    const token = uniqueToken();
    const pending = run(s2, `sleep 5.${token}`);
    await sleep(300);
    let t0 = Date.now();
    expect(adbCli(['disconnect', serial2]).status).toBe(0);
    expect(await pending).toMatchObject({ exitCode: null, lost: expect.stringMatching(/127\.0\.0\.1:6556 (disappeared from the adb server|disconnected from the adb server|went offline)/) });
    expect(Date.now() - t0).toBeLessThan(5_000);
    expect(await deviceProcesses(shell, ownCommand(token))).toEqual([]); // the device hung it up
    execFileSync('bash', [script, 'revive', '6556'], { stdio: ['ignore', 'ignore', 'inherit'], timeout: 60_000 });

    const a = await connect();
    const b = await connect({ serial: serial2 });
    const lost: string[] = [];
    a.onLost((r) => lost.push(r));
    b.onLost((r) => lost.push(r));
    const pa = run(a, 'sleep 5');
    const pb = run(b, 'sleep 5');
    await sleep(300);
    t0 = Date.now();
    process.kill(Number(fs.readFileSync('/tmp/corral-hands/adb/server.pid', 'utf8')), 'SIGKILL');
    for (const res of [await pa, await pb]) expect(res).toMatchObject({ exitCode: null, lost: expect.stringMatching(/adb server at 127\.0\.0\.1:15037/) });
    expect(Date.now() - t0).toBeLessThan(5_000);
    expect(lost).toHaveLength(2);
    await expect(connect()).rejects.toThrow(/no adb server answers at 127\.0\.0\.1:15037/);
    // Everything back for whoever comes next.
    execFileSync('bash', [script, 'start'], { stdio: ['ignore', 'ignore', 'inherit'], timeout: 120_000 });
    expect(await run(await connect(), 'echo back')).toMatchObject({ exitCode: 0, stdout: 'back\n' });
  });
});
