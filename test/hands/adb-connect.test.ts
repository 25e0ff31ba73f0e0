/**
 * The test device with the real adb CLI, and the adb hand connecting, through the REAL adb server (a private one on port 15037) and test devices of our own that
 * speak adb's transport protocol (test/fixtures/adb-device.ts), all started by test/hands-env/adb.sh
 * (run as root; needs `apt-get install adb`); setup in test/helpers/adb-backend.ts.
 */
import { randomBytes } from 'node:crypto';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { adbHandKind } from '../../main/hands/adb';
import { SCREEN_HEIGHT, SCREEN_WIDTH, startAdbDevice } from '../fixtures/adb-device';
import { env, serverPort, serial, serial2, workDir, hostWorkDir, config, shell, sleep, sha256, connect, run, adbCli, decodePng, useAdbBackend } from '../helpers/adb-backend';

useAdbBackend();

describe('the test device (fixture) with the real adb CLI', () => {
  it('is listed by the server and runs `adb shell` with stdout, stderr and the exit code', () => {
    const devices = adbCli(['devices', '-l']);
    expect(devices.status).toBe(0);
    expect(devices.stdout.toString()).toMatch(new RegExp(`^${serial.replace(/\./g, '\\.')}\\s+device product:corral model:CorralTest device:corral`, 'm'));
    const hi = adbCli(['-s', serial, 'shell', 'echo', 'hi']);
    expect(hi.status).toBe(0);
    expect(hi.stdout.toString()).toBe('hi\n');
    const mixed = adbCli(['-s', serial, 'shell', 'echo out; echo err >&2; exit 3']);
    expect(mixed.status).toBe(3);
    expect(mixed.stdout.toString()).toBe('out\n');
    expect(mixed.stderr.toString()).toBe('err\n');
    const stdin = adbCli(['-s', serial, 'shell', 'wc -c'], Buffer.alloc(100_000, 7));
    expect(stdin.stdout.toString().trim()).toBe('100000');
  });

  it('pushes and pulls with `adb push`/`adb pull`, and `adb exec-out screencap -p` gives a PNG', () => {
    const dir = fs.mkdtempSync('/tmp/corral-adb-cli-');
    try {
      const data = randomBytes(300_000);
      fs.writeFileSync(path.join(dir, 'in.bin'), data);
      const remote = `${workDir}/cli/in.bin`;
      expect(adbCli(['-s', serial, 'push', path.join(dir, 'in.bin'), remote]).status).toBe(0);
      expect(sha256(fs.readFileSync(path.join(hostWorkDir, 'cli/in.bin')))).toBe(sha256(data));
      expect(adbCli(['-s', serial, 'pull', remote, path.join(dir, 'out.bin')]).status).toBe(0);
      expect(sha256(fs.readFileSync(path.join(dir, 'out.bin')))).toBe(sha256(data));
      const missing = adbCli(['-s', serial, 'pull', `${workDir}/no-such-file`, path.join(dir, 'x')]);
      expect(missing.status).not.toBe(0);
      expect(`${missing.stdout}${missing.stderr}`).toMatch(/does not exist|No such file/);
      const shot = adbCli(['-s', serial, 'exec-out', 'screencap -p']);
      expect(decodePng(shot.stdout)).toMatchObject({ width: SCREEN_WIDTH, height: SCREEN_HEIGHT });
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('the adb hand: connecting', () => {
  it('claims the device, creates the work folder and names the device', async () => {
    expect(shell.serial).toBe(serial);
    expect(shell.workDir).toBe(workDir);
    expect(shell.model).toBe('CorralTest');
    expect(fs.statSync(hostWorkDir).isDirectory()).toBe(true);
    expect(adbHandKind.describe(config)).toBe(`adb ${serial} (CorralTest)`);
    expect(adbHandKind.defaultWorkDir(config)).toBe('/data/local/tmp/corral');
    expect(adbHandKind.extraTools!.map((t) => t.definition.name)).toEqual(['screenshot']);
    // A deeper work folder is created at connect.
    const deep = await connect({ working_dir: `${workDir}/deep/er` });
    expect(fs.statSync(path.join(hostWorkDir, 'deep/er')).isDirectory()).toBe(true);
    expect((await run(deep, 'pwd', { cwd: `${workDir}/deep/er` })).stdout).toBe(`${workDir}/deep/er\n`);
    await deep.close();
  });

  it('with the device root of its own, the default work folder is /data/local/tmp/corral on the device', async () => {
    if (env.CORRAL_TEST_ADB_JAILED !== '1') return; // without root the device shares this machine's /
    const s = await connect({ working_dir: undefined });
    expect(s.workDir).toBe(adbHandKind.defaultWorkDir(config));
    expect((await run(s, 'pwd; test -d /sdcard && echo sdcard', { cwd: '/data/local/tmp/corral' })).stdout).toBe('/data/local/tmp/corral\nsdcard\n');
    expect(fs.statSync(path.join(env.CORRAL_TEST_ADB_DEVICE_ROOT!, 'data/local/tmp/corral')).isDirectory()).toBe(true);
    expect(fs.existsSync('/data/local/tmp/corral')).toBe(false); // nothing on this machine's own /
    await s.close();
  });

  it('says which devices there are when the serial is missing, and when no server answers', async () => {
    const missing = adbHandKind.connect({ ...config, serial: 'emulator-5554' }, { label: 'x' });
    await expect(missing).rejects.toThrow(/no device with serial 'emulator-5554' on the adb server at 127\.0\.0\.1:15037/);
    await expect(missing).rejects.toThrow(new RegExp(`${serial.replace(/\./g, '\\.')} \\(device\\)`));
    await expect(missing).rejects.toThrow(new RegExp(`${serial2.replace(/\./g, '\\.')} \\(device\\)`));
    await expect(adbHandKind.connect({ ...config, adb_port: 1 }, { label: 'x' })).rejects.toThrow(/no adb server answers at 127\.0\.0\.1:1\b/);
    // A work folder that cannot be made is a clear error too.
    await expect(connect({ working_dir: '/proc/corral-cannot' })).rejects.toThrow(/cannot use \/proc\/corral-cannot as the work folder on device/);
  });

  it('refuses a device that is unauthorized, saying so', async () => {
    // A third device, in this process, that never accepts the server's key. (The CLI runs
    // asynchronously here: a spawnSync would stop this process's daemon from answering.)
    const device = await startAdbDevice({ port: 6557, root: fs.mkdtempSync('/tmp/corral-adb-unauth-'), unauthorized: true });
    const cli = (args: string[]) =>
      new Promise<string>((resolve) =>
        execFile('adb', ['-P', String(serverPort), ...args], { env: { ...process.env, HOME: '/tmp/corral-hands/adb/home' }, timeout: 20_000 }, (_e, out, err) => resolve(`${out}${err}`)),
      );
    try {
      await cli(['connect', '127.0.0.1:6557']);
      for (let i = 0; i < 50 && !/127\.0\.0\.1:6557\s+unauthorized/.test(await cli(['devices'])); i++) await sleep(100);
      expect(await cli(['devices'])).toMatch(/127\.0\.0\.1:6557\s+unauthorized/);
      await expect(adbHandKind.connect({ ...config, serial: '127.0.0.1:6557' }, { label: 'x' })).rejects.toThrow(
        /device 127\.0\.0\.1:6557 is unauthorized: accept the "Allow USB debugging" prompt on the device/,
      );
    } finally {
      await cli(['disconnect', '127.0.0.1:6557']);
      await device.close();
    }
  });
});
