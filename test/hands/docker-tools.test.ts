/**
 * The docker hand's built-in tools in a real container, on both engines (test/helpers/docker-engines.ts): a private Docker Engine
 * (test/hands-env/docker.sh) and a private Podman service through its Docker-compatible API
 * (test/hands-env/podman.sh). Where Podman answers differently in a way users would not care
 * about, the assertion says so for Podman only.
 */
import { beforeAll, describe, expect, it, vi } from 'vitest';
import type { DockerShell } from '../../main/hands/docker';
import { createShellHand } from '../../main/hands/remote/shell-hand';
import { RemoteFileError } from '../../main/hands/remote/types';
import type { Hand } from '../../main/hands/types';
import { BACKENDS, sleep, useEngine } from '../helpers/docker-engines';
import { fullOutputText } from '../../main/hands/full-output';

describe.each(BACKENDS)('on $engine', ({ engine, env }) => {
  const t = useEngine(env, 'tools');
  const { connect, run, liveProcesses } = t;

  describe('the docker hand: built-in tools in a real container', () => {
    let shell: DockerShell;
    let hand: Hand;
    beforeAll(async () => {
      shell = await connect();
      hand = createShellHand(shell, { workDir: '/work', label: 'box' });
    });

    it('write, read, edit, glob and grep work on the container\'s files', async () => {
      const w = await hand.execute('write', { file_path: 'src/app.txt', content: 'alpha\nbeta\ngamma\nbeta\n' });
      expect(w.isError).toBe(false);
      expect((await run(shell, 'cat /work/src/app.txt')).stdout).toBe('alpha\nbeta\ngamma\nbeta\n');

      const r = await hand.execute('read', { file_path: 'src/app.txt', view_range: [2, 3] });
      expect(r.isError).toBe(false);
      expect(r.content).toMatch(/2\s+beta\n\s*3\s+gamma/);

      const twice = await hand.execute('edit', { file_path: 'src/app.txt', old_string: 'beta', new_string: 'BETA' });
      expect(twice.isError).toBe(true);
      expect(twice.content).toMatch(/occurs 2 times/);
      const e = await hand.execute('edit', { file_path: '/work/src/app.txt', old_string: 'gamma', new_string: 'GAMMA' });
      expect(e.isError).toBe(false);
      const all = await hand.execute('edit', { file_path: 'src/app.txt', old_string: 'beta', new_string: 'B', replace_all: true });
      expect(all.content).toMatch(/Replaced 2 occurrences/);
      expect((await run(shell, 'cat /work/src/app.txt')).stdout).toBe('alpha\nB\nGAMMA\nB\n');

      await hand.execute('write', { file_path: 'src/lib/util.ts', content: 'export const x = 1;\n' });
      await hand.execute('write', { file_path: 'README.md', content: '# readme\nGAMMA here too\n' });
      const g = await hand.execute('glob', { pattern: '**/*.ts' });
      expect(g.content).toBe('src/lib/util.ts');
      const g2 = await hand.execute('glob', { pattern: 'src/**' });
      expect(g2.content.split('\n')).toEqual(['src/app.txt', 'src/lib/util.ts']);
      const missing = await hand.execute('read', { file_path: 'nope.txt' });
      expect(missing).toMatchObject({ isError: true, details: { code: 'ENOENT' } });
      const dir = await hand.execute('read', { file_path: 'src' });
      expect(dir).toMatchObject({ isError: true, details: { code: 'EISDIR' } });
    });

    // busybox grep (Debian's 1.35, as in this image) knows neither -I nor --exclude-dir: the
    // shell hand's grep must not rely on them.
    it('grep finds matches in the container (busybox grep)', async () => {
      await hand.execute('write', { file_path: 'grep/a.txt', content: 'one\nGAMMA\n' });
      await hand.execute('write', { file_path: 'grep/b.md', content: '# GAMMA here too\n' });
      const gr = await hand.execute('grep', { pattern: 'GAM+A', path: 'grep' });
      expect(gr.isError).toBe(false);
      expect(gr.content.split('\n').sort()).toEqual(['grep/a.txt:2:GAMMA', 'grep/b.md:1:# GAMMA here too']);
      expect((await hand.execute('grep', { pattern: 'nowhere-to-be-found', path: 'grep' })).content).toMatch(/No matches/);
    });

    // A minified file is one huge line: the result cuts it as the local hand does (500
    // characters and a note), and no more than a few KiB of it comes over from the hand.
    it('grep cuts a matching line megabytes long, as the local hand does', async () => {
      await shell.writeFile('/work/min/app.min.js', Buffer.from(`var needle=1;${'x'.repeat(5_000_000)}\nshort needle line\n`));
      const gr = await hand.execute('grep', { pattern: 'needle', path: 'min' });
      expect(gr.isError).toBe(false);
      const lines = gr.content.split('\n');
      expect(lines).toEqual([`min/app.min.js:1:var needle=1;${'x'.repeat(487)}… [line cut at 500 characters]`, 'min/app.min.js:2:short needle line']);
    });

    // The same inputs give the local hand's answers: a name with a newline is one file, a
    // pattern the local hand refuses is refused, a path that is not there is said to be missing.
    it('glob and grep answer odd names and bad input as the local hand does', async () => {
      await hand.execute('write', { file_path: 'odd/two\nlines.txt', content: 'needle\n' });
      await hand.execute('write', { file_path: 'odd/plain.txt', content: 'hay\n' });
      const g = await hand.execute('glob', { pattern: '*.txt', path: 'odd' });
      expect(g).toMatchObject({ isError: false, content: 'plain.txt\ntwo\nlines.txt' });
      expect(await hand.execute('glob', { pattern: '' })).toMatchObject({ isError: true, content: 'Invalid input for glob: "pattern" is empty.' });
      expect(await hand.execute('glob', { pattern: '/etc/*' })).toMatchObject({ isError: true, content: expect.stringMatching(/"pattern" must be relative/) });
      expect(await hand.execute('grep', { pattern: 'needle', path: 'no/such/dir' })).toMatchObject({ isError: true, content: 'Path not found: no/such/dir' });
    });

    // The pattern is JavaScript RegExp source on every hand: `\\d` is a digit here too (GNU and
    // busybox grep -E read it as a plain "d"), and what the hand's grep cannot say is refused.
    it('grep reads the pattern as JavaScript, as the local hand does', async () => {
      await hand.execute('write', { file_path: 're/a.txt', content: 'abc 123\nhold on\nx = 4\n' });
      expect((await hand.execute('grep', { pattern: '\\d+', path: 're' })).content).toBe('re/a.txt:1:abc 123\nre/a.txt:3:x = 4');
      expect((await hand.execute('grep', { pattern: '^\\w+\\s\\d', path: 're' })).content).toBe('re/a.txt:1:abc 123');
      expect(await hand.execute('grep', { pattern: 'hold(?= on)', path: 're' })).toMatchObject({ isError: true, content: expect.stringMatching(/not supported by grep on this hand/) });
      expect(await hand.execute('grep', { pattern: '(', path: 're' })).toMatchObject({ isError: true, content: expect.stringMatching(/^Invalid regular expression for grep/) });
    });

    // find lists a folder in its on-disk order; the result is in path order, as on the local hand.
    it('grep lists its matches in path order', async () => {
      const names = ['m', 'c', 'x', 'a', 'q', 'b', 'z', 'k', 'e', 'r'];
      for (const n of names) await shell.writeFile(`/work/order/${n}.txt`, Buffer.from('hit\nmiss\nhit\n'));
      const gr = await hand.execute('grep', { pattern: 'hit', path: 'order' });
      expect(gr.content.split('\n')).toEqual([...names].sort().flatMap((n) => [`order/${n}.txt:1:hit`, `order/${n}.txt:3:hit`]));
    });

    it('bash gives exit codes and keeps stderr', async () => {
      // stdout and stderr are two pipes: their order relative to each other is not kept.
      const ok = await hand.execute('bash', { command: 'echo out; echo err >&2; pwd' });
      expect(ok.isError).toBe(false);
      expect(ok.content.split('\n').sort()).toEqual(['/work', '[exit code 0]', 'err', 'out']);
      expect(ok.content.endsWith('\n[exit code 0]')).toBe(true);
      const bad = await hand.execute('bash', { command: 'echo broken >&2; (exit 42)' });
      expect(bad.content).toBe('broken\n[exit code 42]');
      expect(bad.details).toMatchObject({ exit_code: 42 });
      const notFound = await hand.execute('bash', { command: 'no-such-program' });
      expect(notFound.content).toMatch(/not found\n\[exit code 127\]$/);
      // The raw shell keeps the streams apart.
      const raw = await run(shell, 'echo one; echo two >&2; echo three; exit 3');
      expect(raw).toMatchObject({ exitCode: 3, stdout: 'one\nthree\n', stderr: 'two\n' });
    });

    it('caps a 20 MB output for the model, keeping head and tail, with the full output kept', async () => {
      const res = await hand.execute('bash', { command: 'echo FIRST-LINE; head -c 20000000 /dev/zero | tr "\\0" x; echo; echo LAST-LINE' });
      expect(res.isError).toBe(false);
      expect(res.details).toMatchObject({ truncated: true, exit_code: 0 });
      expect(res.content.length).toBeLessThan(31_000);
      expect(res.content.startsWith('FIRST-LINE\n')).toBe(true);
      expect(res.content).toMatch(/characters cut here/);
      expect(res.content.endsWith('LAST-LINE\n[exit code 0]')).toBe(true);
      expect(fullOutputText(res.fullOutput!).length).toBe('FIRST-LINE\n'.length + 20_000_000 + '\nLAST-LINE\n'.length + '[exit code 0]'.length);
      // The full output ends with the status line, as the model's copy does.
    expect(fullOutputText(res.fullOutput!).endsWith('x\nLAST-LINE\n[exit code 0]')).toBe(true);
    });

    it('feeds stdin and moves binary files both ways, up to 64 MiB', async () => {
      const wc = await run(shell, 'wc -c', { stdin: Buffer.alloc(1_000_000, 1) });
      expect(wc.stdout.trim()).toBe('1000000');
      const empty = await run(shell, 'cat; echo end');
      expect(empty.stdout).toBe('end\n');
      // A command that leaves most of its stdin unread keeps its output and exit code. (When an
      // exec ends with stdin unread, Podman resets the attach socket, writes its own error into
      // the command's stderr and often drops the output; the hand drains stdin to avoid that.)
      for (let i = 0; i < 10; i++) {
        expect(await run(shell, 'head -c 5; echo e >&2; exit 3', { stdin: Buffer.alloc(1_000_000, 120) })).toMatchObject({ exitCode: 3, stdout: 'xxxxx', stderr: 'e\n' });
        // The same for a write that fails before reading its data.
        expect(await shell.writeFile('/work', Buffer.alloc(100_000)).catch((e: RemoteFileError) => e.code)).toBe('EISDIR');
      }

      const bytes = Buffer.from(Array.from({ length: 256 * 4 }, (_, i) => i % 256));
      await shell.writeFile('/work/bin/all-bytes', bytes);
      expect((await shell.readFile('/work/bin/all-bytes', 4096)).equals(bytes)).toBe(true);
      expect((await run(shell, 'md5sum /work/bin/all-bytes')).stdout.split(' ')[0]).toBe(
        (await import('node:crypto')).createHash('md5').update(bytes).digest('hex'),
      );

      const big = Buffer.alloc(64 * 1024 * 1024);
      for (let i = 0; i < big.length; i += 4096) big.writeUInt32LE(i, i);
      await shell.writeFile('/work/big.bin', big);
      expect((await run(shell, 'wc -c < /work/big.bin')).stdout.trim()).toBe(String(big.length));
      expect((await shell.readFile('/work/big.bin', big.length)).equals(big)).toBe(true);

      const tooBig = await shell.readFile('/work/big.bin', big.length - 1).catch((e: unknown) => e);
      expect(tooBig).toBeInstanceOf(RemoteFileError);
      expect((tooBig as RemoteFileError).code).toBe('TOOBIG');
      // A file with no size (a device) is cut off at the limit too.
      expect(await shell.readFile('/dev/zero', 1000).catch((e: RemoteFileError) => e.code)).toBe('TOOBIG');
      expect(await shell.readFile('/work/nothing-here', 10).catch((e: RemoteFileError) => e.code)).toBe('ENOENT');
      expect(await shell.readFile('/work', 10).catch((e: RemoteFileError) => e.code)).toBe('EISDIR');
      expect(await shell.writeFile('/work', Buffer.from('x')).catch((e: RemoteFileError) => e.code)).toBe('EISDIR');
      const underFile = await shell.writeFile('/work/big.bin/inside', Buffer.from('x')).catch((e: unknown) => e);
      expect(underFile).toBeInstanceOf(RemoteFileError);
      expect((underFile as RemoteFileError).message).toMatch(/big\.bin/);
      // Overwriting keeps the file's mode.
      await run(shell, 'printf "#!/bin/sh\\necho v1\\n" > /work/tool.sh; chmod 755 /work/tool.sh');
      await shell.writeFile('/work/tool.sh', Buffer.from('#!/bin/sh\necho v2\n'));
      expect((await run(shell, '/work/tool.sh')).stdout).toBe('v2\n');
      // 64 MiB each way through the engine: 6-17 s on docker and 9-24 s on podman in CI runs, so
      // the default 30 s left little room on a loaded machine (CI-J: over 30 s, beside another CI).
    }, 90_000);

    it('an abort kills the process group in the container within 500 ms', async () => {
      await run(shell, 'rm -f /work/marker /work/marker2');
      const ctrl = new AbortController();
      const pending = hand.execute('bash', { command: 'sleep 30; touch /work/marker' }, { signal: ctrl.signal });
      // Aborted once it runs (a shell may take a while to start on a loaded machine).
      await vi.waitFor(async () => expect(await liveProcesses(shell, /sleep 30$/)).toHaveLength(1), { timeout: 20_000, interval: 100 });
      // The engine finishes tidying the exec that looked (Podman's takes a moment) before the clock starts.
      await sleep(300);
      const t0 = Date.now();
      ctrl.abort();
      const res = await pending;
      expect(Date.now() - t0).toBeLessThan(500);
      expect(res.isError).toBe(true);
      expect(res.content).toMatch(/^\[interrupted: the call was aborted after [\d,]+ ms; the command was stopped with SIGINT/);

      // A command that ignores TERM, aborted before its touch would run: KILL follows a second later.
      const ctrl2 = new AbortController();
      const raw = shell.exec('trap "" TERM; sleep 2; touch /work/marker2', { signal: ctrl2.signal });
      await sleep(300);
      const t1 = Date.now();
      ctrl2.abort();
      expect(await raw).toEqual({ exitCode: null, signal: 'TERM' });
      expect(Date.now() - t1).toBeLessThan(500);

      await sleep(1500);
      expect((await run(shell, 'ls /work')).stdout.split('\n')).not.toContain('marker');
      expect(await liveProcesses(shell, /sleep (30|2)$/)).toEqual([]);
      await sleep(1000);
      expect((await run(shell, 'ls /work')).stdout.split('\n')).not.toContain('marker2');
      // The container has no zombies left either: its init reaps them.
      expect((await run(shell, 'ps -o stat,args')).stdout).not.toMatch(/^\s*Z/m);
    });

    it('an abort before the command starts runs nothing', async () => {
      const ctrl = new AbortController();
      ctrl.abort();
      expect(await shell.exec('touch /work/never', { signal: ctrl.signal })).toEqual({ exitCode: null, signal: 'TERM' });
      const ctrl2 = new AbortController();
      const p = shell.exec('touch /work/never', { signal: ctrl2.signal });
      ctrl2.abort();
      await p;
      await sleep(300);
      expect((await run(shell, 'ls /work')).stdout.split('\n')).not.toContain('never');
    });
  });
});
