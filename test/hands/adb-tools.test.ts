/**
 * The adb hand's commands, files and screenshot, through the REAL adb server (a private one on port 15037) and test devices of our own that
 * speak adb's transport protocol (test/fixtures/adb-device.ts), all started by test/hands-env/adb.sh
 * (run as root; needs `apt-get install adb`); setup in test/helpers/adb-backend.ts.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { adbHandKind, pngSize } from '../../main/hands/adb';
import { RemoteFileError } from '../../main/hands/remote/types';
import { SCREEN_HEIGHT, SCREEN_RGB, SCREEN_WIDTH } from '../fixtures/adb-device';
import { env, serial, workDir, hostWorkDir, shell, hand, sleep, sha256, connect, run, adbCli, deviceProcesses, uniqueToken, ownCommand, decodePng, useAdbBackend } from '../helpers/adb-backend';
import { fullOutputText } from '../../main/hands/full-output';

useAdbBackend();

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

    const b = await hand.execute('bash', { command: 'cat tools/notes.txt | wc -l; echo oops >&2; (exit 4)' });
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
    expect(fullOutputText(res.fullOutput!).length).toBe('FIRST-LINE\n'.length + 20_000_000 + '\nLAST-LINE\n'.length + '[exit code 0]'.length);
    expect(fullOutputText(res.fullOutput!).slice(11, 20_000_011)).toBe('x'.repeat(20_000_000));
    // The full output ends with the status line, as the model's copy does.
    expect(fullOutputText(res.fullOutput!).endsWith('x\nLAST-LINE\n[exit code 0]')).toBe(true);
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
    // It runs (the shell may take a while to start on a loaded machine).
    await vi.waitFor(async () => expect(await deviceProcesses(shell, new RegExp(`^sleep 30\\.${token}$`))).toHaveLength(1), { timeout: 20_000, interval: 100 });
    const t0 = Date.now();
    ctrl.abort();
    const res = await pending;
    expect(Date.now() - t0).toBeLessThan(500);
    expect(res.isError).toBe(true);
    expect(res.content).toMatch(/^\[interrupted: the call was aborted after [\d,]+ ms; the command was stopped with SIGINT/);
    expect(Date.now() - started).toBeLessThan(5_000);
    await sleep(1_500);
    expect(fs.existsSync(path.join(hostWorkDir, marker))).toBe(false);
    expect((await run(shell, `ls ${marker}`, { cwd: workDir })).exitCode).not.toBe(0);
    expect(await deviceProcesses(shell, ownCommand(token))).toEqual([]); // neither sleep nor its sh
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
    expect(await deviceProcesses(shell, ownCommand(token))).toEqual([]);
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
