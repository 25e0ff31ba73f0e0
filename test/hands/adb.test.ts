/**
 * The adb hand through the REAL adb server (a private one on port 15037) and test devices of our
 * own that speak adb's transport protocol (test/fixtures/adb-device.ts), all started by
 * test/hands-env/adb.sh (run as root; needs `apt-get install adb`). Device 1 (6555) serves most
 * tests; device 2 (6556) is killed and revived by the death test.
 */
import { createHash, randomBytes } from 'node:crypto';
import { execFile, execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adbHandKind, AdbShell, pngSize, type AdbConfig } from '../../main/hands/adb';
import { createShellHand } from '../../main/hands/remote/shell-hand';
import { RemoteFileError, type RemoteShell } from '../../main/hands/remote/types';
import type { Hand } from '../../main/hands/types';
import { backendTurn } from '../helpers/hands-env';
import { SCREEN_HEIGHT, SCREEN_RGB, SCREEN_WIDTH, startAdbDevice } from '../fixtures/adb-device';

const root = path.resolve(__dirname, '../..');
const script = path.join(root, 'test/hands-env/adb.sh');
let env: Record<string, string>;
let serverPort: number;
let serial: string;
let serial2: string;
/** The test work folder as the device sees it, and as this machine sees it. */
let workDir: string;
let hostWorkDir: string;
let config: AdbConfig;
let shell: AdbShell;
let hand: Hand;
const opened: RemoteShell[] = [];
let releaseTurn: (() => void) | undefined;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

async function connect(extra: Partial<AdbConfig> = {}): Promise<AdbShell> {
  const s = (await adbHandKind.connect({ ...config, ...extra }, { label: 'adb-test' })) as AdbShell;
  opened.push(s);
  return s;
}

/** Runs a command on a raw shell and returns its output. */
async function run(s: RemoteShell, command: string, opts: { stdin?: Buffer; cwd?: string; signal?: AbortSignal } = {}) {
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  const res = await s.exec(command, { ...opts, onOutput: (c, st) => (st === 'stdout' ? out : err).push(c) });
  return { ...res, stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8') };
}

/** The adb CLI against the private server. */
function adbCli(args: string[], input?: Buffer) {
  return spawnSync('adb', ['-P', String(serverPort), ...args], { env: { ...process.env, HOME: '/tmp/corral-hands/adb/home' }, input, timeout: 20_000 });
}

/** Live (non-zombie) processes whose command line matches, seen with the device's own ps. */
async function deviceProcesses(s: RemoteShell, args: RegExp): Promise<string[]> {
  const ps = await run(s, 'ps -eo stat=,args=');
  expect(ps.exitCode).toBe(0);
  expect(ps.stdout).toMatch(/ps -eo/); // ps did list processes
  return ps.stdout
    .split('\n')
    .map((l) => /^\s*(\S+)\s+(.*)$/.exec(l))
    .filter((m): m is RegExpExecArray => m !== null && !m[1]!.startsWith('Z') && !m[2]!.includes('ps -eo') && args.test(m[2]!))
    .map((m) => m[2]!);
}

/** A number no other process here has in its command line. */
const uniqueToken = () => String(100_000 + Math.floor(Math.random() * 899_999));

/** A strict PNG decoder for RGB/8-bit images: checks the signature and every CRC, inflates the pixels. */
function decodePng(buf: Buffer): { width: number; height: number; pixels: Buffer } {
  expect(buf.subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
  let pos = 8;
  let width = 0;
  let height = 0;
  const idat: Buffer[] = [];
  const types: string[] = [];
  while (pos < buf.length) {
    const len = buf.readUInt32BE(pos);
    const type = buf.toString('ascii', pos + 4, pos + 8);
    const data = buf.subarray(pos + 8, pos + 8 + len);
    expect(buf.readUInt32BE(pos + 8 + len), `CRC of ${type}`).toBe(zlib.crc32(buf.subarray(pos + 4, pos + 8 + len)));
    types.push(type);
    if (type === 'IHDR') {
      width = data.readUInt32BE(0);
      height = data.readUInt32BE(4);
      expect([data[8], data[9]]).toEqual([8, 2]); // 8-bit RGB
    }
    if (type === 'IDAT') idat.push(data);
    pos += 12 + len;
  }
  expect(types[0]).toBe('IHDR');
  expect(types.at(-1)).toBe('IEND');
  const raw = zlib.inflateSync(Buffer.concat(idat));
  expect(raw.length).toBe(height * (1 + width * 3));
  const pixels = Buffer.concat(Array.from({ length: height }, (_, y) => {
    const row = raw.subarray(y * (1 + width * 3), (y + 1) * (1 + width * 3));
    expect(row[0]).toBe(0); // filter: none
    return row.subarray(1);
  }));
  return { width, height, pixels };
}

beforeAll(async () => {
  // This file kills and revives the devices and the server: the other adb tests wait their turn.
  releaseTurn = await backendTurn('adb');
  const out = execFileSync('bash', [script, 'start'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], timeout: 120_000 });
  env = Object.fromEntries([...out.matchAll(/^export (\w+)=(.*)$/gm)].map((m) => [m[1]!, m[2]!]));
  serverPort = Number(env.ANDROID_ADB_SERVER_PORT);
  serial = env.CORRAL_TEST_ADB_SERIAL!;
  serial2 = env.CORRAL_TEST_ADB_SERIAL2!;
  workDir = env.CORRAL_TEST_ADB_WORKDIR!;
  hostWorkDir = env.CORRAL_TEST_ADB_HOST_WORKDIR!;
  expect(serverPort).toBe(15037);
  // The hand finds the private server through the variable adb itself reads.
  process.env.ANDROID_ADB_SERVER_PORT = String(serverPort);
  fs.rmSync(hostWorkDir, { recursive: true, force: true });
  config = { type: 'adb', serial, working_dir: workDir };
  shell = await connect();
  hand = createShellHand(shell, { workDir, label: 'adb-test' });
}, 300_000);

afterAll(async () => {
  await Promise.all(opened.map((s) => s.close()));
  releaseTurn?.();
});

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

describe('the adb hand: commands and files', () => {
  it('answers the built-in tools end to end', async () => {
    const w = await hand.execute('write', { file_path: 'tools/notes.txt', content: 'alpha\nbeta\ngamma\n' });
    expect(w).toMatchObject({ isError: false, content: 'Wrote 17 bytes to tools/notes.txt.' });
    expect(fs.readFileSync(path.join(hostWorkDir, 'tools/notes.txt'), 'utf8')).toBe('alpha\nbeta\ngamma\n');

    const r = await hand.execute('read', { file_path: 'tools/notes.txt' });
    expect(r.isError).toBe(false);
    expect(r.content).toMatch(/1\talpha\n\s*2\tbeta\n\s*3\tgamma/);

    const e = await hand.execute('edit', { file_path: 'tools/notes.txt', old_string: 'beta', new_string: 'BETA' });
    expect(e).toMatchObject({ isError: false, content: 'Replaced 1 occurrence in tools/notes.txt.' });
    expect(fs.readFileSync(path.join(hostWorkDir, 'tools/notes.txt'), 'utf8')).toBe('alpha\nBETA\ngamma\n');

    fs.mkdirSync(path.join(hostWorkDir, 'tools/src/deep'), { recursive: true });
    fs.writeFileSync(path.join(hostWorkDir, 'tools/src/deep/a.ts'), 'export const needle = 1;\n');
    fs.writeFileSync(path.join(hostWorkDir, 'tools/src/b.js'), 'no match here\n');
    const g = await hand.execute('glob', { pattern: '**/*.ts', path: 'tools' });
    expect(g).toMatchObject({ isError: false, content: 'src/deep/a.ts' });
    const gr = await hand.execute('grep', { pattern: 'need+le', path: 'tools' });
    expect(gr.isError).toBe(false);
    expect(gr.content).toBe('tools/src/deep/a.ts:1:export const needle = 1;');

    const b = await hand.execute('bash', { command: 'cat tools/notes.txt | wc -l; echo oops >&2; exit 4' });
    expect(b.isError).toBe(false);
    expect(b.content).toBe('3\noops\n[exit code 4]');
    expect(b.details).toMatchObject({ exit_code: 4 });

    expect(await hand.execute('read', { file_path: 'tools/none.txt' })).toMatchObject({ isError: true, content: 'tools/none.txt does not exist.' });
    expect(await hand.execute('read', { file_path: 'tools/src' })).toMatchObject({ isError: true, content: 'tools/src is a directory, not a file.' });
    expect(await hand.execute('write', { file_path: 'tools/src', content: 'x' })).toMatchObject({ isError: true, content: 'tools/src is a directory, not a file.' });
  });

  it('keeps stdout and stderr apart, gives exit codes, feeds stdin, runs in the folder asked', async () => {
    expect(await run(shell, 'echo one; echo two >&2; echo three; exit 42')).toMatchObject({ exitCode: 42, stdout: 'one\nthree\n', stderr: 'two\n' });
    expect(await run(shell, 'true')).toMatchObject({ exitCode: 0, stdout: '', stderr: '' });
    expect(await run(shell, 'no-such-program-xyz')).toMatchObject({ exitCode: 127, stderr: expect.stringMatching(/not found/) });
    expect(await run(shell, 'kill -9 $$')).toMatchObject({ exitCode: 137 }); // 128 + SIGKILL, as adbd reports it
    expect((await run(shell, 'wc -c', { stdin: Buffer.alloc(1_000_000, 1) })).stdout.trim()).toBe('1000000');
    expect((await run(shell, 'cat; echo end')).stdout).toBe('end\n'); // no stdin: closed at once
    expect((await run(shell, 'pwd', { cwd: workDir })).stdout).toBe(`${workDir}\n`);
    expect(await run(shell, 'echo unreachable', { cwd: `${workDir}/no/such/dir` })).toMatchObject({ exitCode: 1, stdout: '' });
    // Quotes, newlines and a command longer than a service name may be (64 KiB): staged as a script.
    expect((await run(shell, `printf '%s\\n' "it's" 'a "b"'\necho $((6*7))`)).stdout).toBe(`it's\na "b"\n42\n`);
    const long = `x=${'y'.repeat(100_000)}; echo \${#x}; pwd`;
    expect(await run(shell, long, { cwd: workDir })).toMatchObject({ exitCode: 0, stdout: `100000\n${workDir}\n` });
    expect(fs.readdirSync(path.dirname(hostWorkDir)).filter((f) => f.startsWith('.corral-exec-'))).toEqual([]);
  });

  it('caps a 20 MB output for the model, keeping head and tail, with the full output kept', async () => {
    const res = await hand.execute('bash', { command: 'echo FIRST-LINE; head -c 20000000 /dev/zero | tr "\\0" x; echo; echo LAST-LINE' });
    expect(res.isError).toBe(false);
    expect(res.details).toMatchObject({ truncated: true, exit_code: 0 });
    expect(res.content.length).toBeLessThan(31_000);
    expect(res.content.startsWith('FIRST-LINE\nxxx')).toBe(true);
    expect(res.content).toMatch(/characters cut here/);
    expect(res.content.endsWith('xxx\nLAST-LINE\n[exit code 0]')).toBe(true);
    expect(res.fullOutput!.length).toBe('FIRST-LINE\n'.length + 20_000_000 + '\nLAST-LINE\n'.length);
    expect(res.fullOutput!.slice(11, 20_000_011)).toBe('x'.repeat(20_000_000));
    expect(res.fullOutput!.endsWith('x\nLAST-LINE\n')).toBe(true);
  });

  it('pushes and pulls a 5 MB binary file intact, keeps permissions, maps errors', async () => {
    const data = randomBytes(5 * 1024 * 1024);
    const file = `${workDir}/bin/deep/blob.bin`; // parents are created
    await shell.writeFile(file, data);
    expect(sha256(fs.readFileSync(path.join(hostWorkDir, 'bin/deep/blob.bin')))).toBe(sha256(data));
    expect((await run(shell, `sha256sum ${file}`)).stdout.split(' ')[0]).toBe(sha256(data));
    const back = await shell.readFile(file, 10 * 1024 * 1024);
    expect(back.length).toBe(data.length);
    expect(sha256(back)).toBe(sha256(data));
    // Empty files both ways.
    await shell.writeFile(`${workDir}/bin/empty`, Buffer.alloc(0));
    expect((await shell.readFile(`${workDir}/bin/empty`, 10)).length).toBe(0);
    // An existing file keeps its mode when rewritten; a new one is 644.
    await run(shell, `printf '#!/bin/sh\\necho v1\\n' > ${workDir}/bin/tool.sh && chmod 755 ${workDir}/bin/tool.sh`);
    await shell.writeFile(`${workDir}/bin/tool.sh`, Buffer.from('#!/bin/sh\necho v2\n'));
    expect((await run(shell, `${workDir}/bin/tool.sh`)).stdout).toBe('v2\n');
    expect(fs.statSync(path.join(hostWorkDir, 'bin/tool.sh')).mode & 0o777).toBe(0o755);
    expect(fs.statSync(path.join(hostWorkDir, 'bin/empty')).mode & 0o777).toBe(0o644);

    const code = async (p: Promise<unknown>) => p.then(() => 'ok', (e: unknown) => (e instanceof RemoteFileError ? e.code : String(e)));
    expect(await code(shell.readFile(file, 1024))).toBe('TOOBIG');
    expect(await code(shell.readFile(`${workDir}/bin/none`, 1024))).toBe('ENOENT');
    expect(await code(shell.readFile(`${workDir}/bin`, 1024))).toBe('EISDIR');
    expect(await code(shell.writeFile(`${workDir}/bin`, Buffer.from('x')))).toBe('EISDIR');
    expect(await code(shell.writeFile(`${workDir}/bin/empty/under-a-file`, Buffer.from('x')))).not.toBe('ok');
    // The sync stream of a refused read does not spoil the next call.
    expect((await shell.readFile(`${workDir}/bin/empty`, 10)).length).toBe(0);
  });

  it('abort hangs up the command on the device at once: no marker, no process left', async () => {
    const token = uniqueToken();
    const marker = `marker-${token}`;
    const ctrl = new AbortController();
    const started = Date.now();
    const pending = hand.execute('bash', { command: `sleep 30.${token}; touch ${marker}` }, { signal: ctrl.signal });
    await sleep(500);
    expect(await deviceProcesses(shell, new RegExp(`^sleep 30\\.${token}$`))).toHaveLength(1); // it runs
    const t0 = Date.now();
    ctrl.abort();
    const res = await pending;
    expect(Date.now() - t0).toBeLessThan(500);
    expect(res.isError).toBe(true);
    expect(res.content).toMatch(/interrupted after \d+ ms/);
    expect(Date.now() - started).toBeLessThan(5_000);
    await sleep(1_500);
    expect(fs.existsSync(path.join(hostWorkDir, marker))).toBe(false);
    expect((await run(shell, `ls ${marker}`, { cwd: workDir })).exitCode).not.toBe(0);
    expect(await deviceProcesses(shell, new RegExp(token))).toEqual([]); // neither sleep nor its sh
    // The raw shell: an abort resolves at once too, and the shell goes on working.
    const c2 = new AbortController();
    const p2 = run(shell, `sleep 20.${token}`, { signal: c2.signal });
    await sleep(200);
    const t1 = Date.now();
    c2.abort();
    expect(await p2).toMatchObject({ exitCode: null, signal: 'HUP' });
    expect(Date.now() - t1).toBeLessThan(500);
    expect((await run(shell, 'echo still')).stdout).toBe('still\n');
  });

  it('close() ends the commands it started', async () => {
    const s = await connect();
    const token = uniqueToken();
    const pending = run(s, `sleep 40.${token}`);
    await sleep(300);
    expect(await deviceProcesses(shell, new RegExp(`^sleep 40\\.${token}$`))).toHaveLength(1);
    await s.close();
    expect((await pending).exitCode).toBeNull();
    await sleep(1_000);
    expect(await deviceProcesses(shell, new RegExp(token))).toEqual([]);
    expect(await run(s, 'echo x')).toMatchObject({ exitCode: null, lost: expect.stringMatching(/closed/) });
  });
});

describe('the adb hand: screenshot', () => {
  it('returns the screen as a decodable PNG whose size matches', async () => {
    const tool = adbHandKind.extraTools!.find((t) => t.definition.name === 'screenshot')!;
    const res = await tool.run(shell, {}, {});
    expect(res.isError).toBe(false);
    expect(res.content).toBe(`Screenshot of ${serial} (CorralTest) (${SCREEN_WIDTH}×${SCREEN_HEIGHT} PNG)`);
    expect(res.images).toHaveLength(1);
    expect(res.images![0]!.media_type).toBe('image/png');
    const png = Buffer.from(res.images![0]!.data, 'base64');
    const decoded = decodePng(png);
    expect(decoded).toMatchObject({ width: SCREEN_WIDTH, height: SCREEN_HEIGHT });
    expect(pngSize(png)).toEqual({ width: SCREEN_WIDTH, height: SCREEN_HEIGHT });
    for (let i = 0; i < decoded.pixels.length; i += 3) expect([...decoded.pixels.subarray(i, i + 3)]).toEqual(SCREEN_RGB);
    // Exactly what the device's own screencap writes.
    expect(png.equals(adbCli(['-s', serial, 'exec-out', 'screencap -p']).stdout)).toBe(true);
    // A screencap that fails says so: take the device's screen image away for a moment.
    const screen = path.join(env.CORRAL_TEST_ADB_DEVICE_ROOT!, 'system/screen.png');
    fs.renameSync(screen, `${screen}.away`);
    try {
      const broken = await tool.run(shell, {}, {});
      expect(broken).toMatchObject({ isError: true, content: expect.stringMatching(/^screencap failed on 127\.0\.0\.1:6555 \(CorralTest\) \(exit code 1\): .*No such file/) });
      expect(broken.images).toBeUndefined();
    } finally {
      fs.renameSync(`${screen}.away`, screen);
    }
  });
});

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
      if (!m[2]!.includes(token) || m[2]!.startsWith('ps ')) continue;
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
    expect(await deviceProcesses(shell, new RegExp(token))).toEqual([]); // the device hung it up
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
