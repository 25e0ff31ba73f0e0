import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createLocalHand, type LocalHand } from '../../main/hands/local';
import { BUILTIN_TOOL_DEFINITIONS } from '../../main/hands/tools/definitions';
import { globToRegExp } from '../../main/hands/tools/glob';
import { tmpDir } from '../helpers/tmp';

let dir: string;
let hand: LocalHand;
beforeEach(() => {
  dir = fs.realpathSync(tmpDir('corral-hand-'));
  hand = createLocalHand({ workDir: dir });
});
afterEach(async () => {
  await hand.dispose();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Swaps the hand for one without the sandbox: these tests look at how the runner handles the
 * command's own process group on this machine, which only an unsandboxed command shows as it
 * is (in the sandbox the group holds bubblewrap, and the command lives in a PID namespace that
 * ends with it: test/hands/sandbox.test.ts covers that side).
 */
async function useUnsandboxed(): Promise<void> {
  await hand.dispose();
  hand = createLocalHand({ workDir: dir, sandbox: false });
}
const put = (rel: string, content: string | Buffer) => {
  fs.mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
  fs.writeFileSync(path.join(dir, rel), content);
};
const get = (rel: string) => fs.readFileSync(path.join(dir, rel), 'utf8');

/**
 * Running (non-zombie) members of process group `pgid`, from ps. Killed orphans are reparented
 * to init, which may be slow to reap them; a zombie is dead, so it does not count.
 */
function liveMembers(pgid: number): string[] {
  const out = execFileSync('ps', ['-eo', 'pid=,pgid=,stat=,args='], { encoding: 'utf8' });
  return out.split('\n').filter((line) => {
    const [, g, stat] = line.trim().split(/\s+/);
    return Number(g) === pgid && !stat!.startsWith('Z');
  });
}

/** Is any process of this group running? (process.kill(-pgid, 0), then ps to look past zombies.) */
function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
  } catch (err) {
    expect((err as NodeJS.ErrnoException).code).toBe('ESRCH');
    return false;
  }
  return liveMembers(pgid).length > 0;
}

describe('the local hand', () => {
  it('creates its work folder and lists its six tools, matching the definitions', async () => {
    const nested = path.join(tmpDir(), 'a', 'b', 'c');
    const h = createLocalHand({ workDir: nested });
    expect(fs.statSync(nested).isDirectory()).toBe(true);
    expect([...h.tools]).toEqual(['bash', 'read', 'write', 'edit', 'glob', 'grep']);
    expect(BUILTIN_TOOL_DEFINITIONS.map((d) => d.name)).toEqual([...h.tools]);
    for (const d of BUILTIN_TOOL_DEFINITIONS) {
      expect(d.description.length).toBeGreaterThan(80);
      expect(d.input_schema.type).toBe('object');
      for (const req of d.input_schema.required ?? []) expect(Object.keys(d.input_schema.properties)).toContain(req);
    }
    const bash = BUILTIN_TOOL_DEFINITIONS.find((d) => d.name === 'bash')!;
    expect(bash.description).toMatch(/fresh shell/);
    expect(Object.keys(bash.input_schema.properties).sort()).toEqual(['command', 'restart', 'timeout_ms']);
    await h.dispose();
  });

  it('answers unknown tools and wrongly typed inputs with an error, without throwing', async () => {
    const unknown = await hand.execute('rm_rf', {});
    expect(unknown.isError).toBe(true);
    expect(unknown.content).toMatch(/Unknown tool "rm_rf".*bash, read, write, edit, glob, grep/);

    const cases: [string, Record<string, unknown>, RegExp][] = [
      ['read', { file_path: 42 }, /"file_path" is required and must be a string \(got number\)/],
      ['read', {}, /"file_path" is required/],
      ['write', { file_path: 'x.txt' }, /"content" is required/],
      ['edit', { file_path: 'x.txt', old_string: 'a', new_string: ['b'] }, /"new_string" .*got an array/],
      ['edit', { file_path: 'x.txt', old_string: 'a', new_string: 'b', replace_all: 'yes' }, /"replace_all" must be true or false/],
      ['glob', { pattern: null }, /"pattern" is required/],
      ['grep', { pattern: 'x', path: 7 }, /"path" must be a string/],
      ['bash', {}, /"command" is required/],
      ['bash', { command: 5 }, /"command" must be a string/],
      ['bash', { command: 'echo hi', timeout_ms: '10' }, /"timeout_ms" must be a number/],
      ['read', { file_path: 'x', view_range: '1-2' }, /view_range/],
    ];
    for (const [tool, input, message] of cases) {
      const r = await hand.execute(tool, input);
      expect(r.isError, `${tool} ${JSON.stringify(input)}`).toBe(true);
      expect(r.content).toMatch(message);
    }
    expect(fs.existsSync(path.join(dir, 'x.txt'))).toBe(false);
    const notObject = await hand.execute('read', 'file.txt' as unknown as Record<string, unknown>);
    expect(notObject.isError).toBe(true);
  });
});

describe('bash', () => {
  it('gives stdout and stderr in arrival order, then the exit code', async () => {
    const r = await hand.execute('bash', { command: 'echo one; sleep 0.05; echo two >&2; sleep 0.05; echo three; exit 3' });
    expect(r.content).toBe('one\ntwo\nthree\n[exit code 3]');
    expect(r.isError).toBe(false);
    expect(r.details).toMatchObject({ exit_code: 3, signal: null, output_chars: 14, truncated: false });
    expect(r.details!.duration_ms).toBeGreaterThanOrEqual(90);
    expect(r.fullOutput).toBeUndefined();
  });

  it('runs in the work folder with stdin closed', async () => {
    const r = await hand.execute('bash', { command: 'pwd; echo made > made.txt; read line; echo "read-rc=$?"' });
    expect(r.content).toBe(`${dir}\nread-rc=1\n[exit code 0]`);
    expect(get('made.txt')).toBe('made\n');
  });

  for (const sandboxed of [true, false]) {
    it(`gives commands an allowlisted environment, plus what the config sets (${sandboxed ? 'sandboxed' : 'unsandboxed'})`, async () => {
      const saved = { ...process.env };
      process.env.FOO_TOKEN = 'tok-123';
      process.env.MY_API_KEY = 'key-456';
      process.env.db_password = 'pw-789';
      process.env.DATABASE_URL = 'postgres://app:hunter2@db.example/app';
      process.env.CORRAL_PLAIN_VAR = 'plain-but-not-allowed';
      process.env.LANG = 'C.UTF-8';
      const h = createLocalHand({ workDir: tmpDir(), sandbox: sandboxed ? undefined : false, env: { GREETING: 'hi there' } });
      try {
        const r = await h.execute('bash', { command: 'echo "[$FOO_TOKEN][$MY_API_KEY][$db_password][$CORRAL_PLAIN_VAR][$GREETING][$HOME][$LANG]"; env' });
        expect(r.content.split('\n')[0]).toBe(`[][][][][hi there][${process.env.HOME}][C.UTF-8]`);
        for (const planted of ['tok-123', 'key-456', 'pw-789', 'hunter2', 'plain-but-not-allowed']) expect(r.content).not.toContain(planted);
        expect(r.content).toContain(`PATH=${process.env.PATH}`);
      } finally {
        await h.dispose();
        for (const k of ['FOO_TOKEN', 'MY_API_KEY', 'db_password', 'DATABASE_URL', 'CORRAL_PLAIN_VAR', 'LANG']) delete process.env[k];
        Object.assign(process.env, saved);
      }
    });
  }

  it('reports a signal that killed the shell', async () => {
    await useUnsandboxed(); // in the sandbox, the wrapper reports it as exit code 137
    const r = await hand.execute('bash', { command: 'echo before; kill -9 $$' });
    expect(r.content).toBe('before\n[killed by signal SIGKILL]');
    expect(r.details).toMatchObject({ exit_code: null, signal: 'SIGKILL' });
  });

  it('on abort kills the whole process group and resolves promptly', async () => {
    await useUnsandboxed();
    const ac = new AbortController();
    const call = hand.execute('bash', { command: 'sleep 30; echo done > marker' }, { signal: ac.signal });
    await sleep(200);
    // While it runs: the shell (our child) leads its own process group, and sleep is in it.
    const shell = execFileSync('ps', ['-eo', 'pid=,ppid=,pgid=,args='], { encoding: 'utf8' })
      .split('\n')
      .map((l) => l.trim().split(/\s+/))
      .find((f) => Number(f[1]) === process.pid && f.slice(3).join(' ') === 'bash -c sleep 30; echo done > marker');
    expect(shell).toBeDefined();
    expect(shell![2]).toBe(shell![0]);
    expect(liveMembers(Number(shell![0])).some((l) => l.includes('sleep 30'))).toBe(true);
    const abortedAt = performance.now();
    ac.abort();
    const r = await call;
    expect(performance.now() - abortedAt).toBeLessThan(500);
    expect(r.isError).toBe(true);
    expect(r.content).toMatch(/\[interrupted: the call was aborted after \d+ ms; the command's process group was killed\]$/);
    expect(r.details).toMatchObject({ interrupted: true, exit_code: null });
    const pgid = r.details!.pid as number;
    expect(pgid).toBe(Number(shell![0]));
    await sleep(1500);
    expect(fs.existsSync(path.join(dir, 'marker'))).toBe(false);
    expect(liveMembers(pgid).filter((l) => l.includes('sleep 30'))).toEqual([]);
    expect(groupAlive(pgid)).toBe(false);
  });

  it('escalates to SIGKILL for a group that ignores SIGTERM', async () => {
    await useUnsandboxed();
    const ac = new AbortController();
    const call = hand.execute('bash', { command: "trap '' TERM; sleep 30; echo done > marker2" }, { signal: ac.signal });
    await sleep(200);
    const abortedAt = performance.now();
    ac.abort();
    const r = await call;
    expect(performance.now() - abortedAt).toBeLessThan(500);
    const pgid = r.details!.pid as number;
    expect(groupAlive(pgid)).toBe(true); // still alive: it ignored SIGTERM
    await sleep(1500);
    expect(groupAlive(pgid)).toBe(false);
    expect(fs.existsSync(path.join(dir, 'marker2'))).toBe(false);
  });

  it('does not start a command when the signal is already aborted', async () => {
    const ac = new AbortController();
    ac.abort();
    const r = await hand.execute('bash', { command: 'echo x > ran' }, { signal: ac.signal });
    expect(r.isError).toBe(true);
    expect(r.content).toMatch(/aborted before/);
    await sleep(100);
    expect(fs.existsSync(path.join(dir, 'ran'))).toBe(false);
  });

  it('times out at the smaller of the call option and timeout_ms, killing the group', async () => {
    let t0 = performance.now();
    let r = await hand.execute('bash', { command: 'echo started; sleep 30' }, { timeoutMs: 300 });
    expect(performance.now() - t0).toBeLessThan(1000);
    expect(r.isError).toBe(true);
    expect(r.content).toBe("started\n[timed out after 300 ms; the command's process group was killed]");
    expect(r.details).toMatchObject({ timed_out: true });

    t0 = performance.now();
    r = await hand.execute('bash', { command: 'sleep 30', timeout_ms: 250 }, { timeoutMs: 10_000 });
    expect(performance.now() - t0).toBeLessThan(1000);
    expect(r.content).toMatch(/timed out after 250 ms/);
    await sleep(1200);
    expect(groupAlive(r.details!.pid as number)).toBe(false);

    r = await hand.execute('bash', { command: 'sleep 0.3; echo finished', timeout_ms: 10_000 }, { timeoutMs: 5_000 });
    expect(r.content).toBe('finished\n[exit code 0]');
    // A limit beyond what a timer can hold is not a zero timeout.
    r = await hand.execute('bash', { command: 'sleep 0.1; echo huge', timeout_ms: 1e12 });
    expect(r.content).toBe('huge\n[exit code 0]');
  });

  it('caps 20 MB of output for the model, keeping head and tail, and gives the full output', async () => {
    const t0 = performance.now();
    const r = await hand.execute('bash', { command: "echo START; head -c 20000000 /dev/zero | tr '\\0' a; echo; echo END" });
    expect(performance.now() - t0).toBeLessThan(10_000);
    expect(r.isError).toBe(false);
    expect(r.details).toMatchObject({ exit_code: 0, truncated: true, output_chars: 20_000_011 });
    expect(r.content.length).toBeLessThanOrEqual(30_100);
    expect(r.content.startsWith(`START\n${'a'.repeat(5000)}`)).toBe(true);
    expect(r.content.endsWith(`${'a'.repeat(5000)}\nEND\n[exit code 0]`)).toBe(true);
    const m = /\n\[… ([\d,]+) characters cut here; the full output is kept for the UI …\]\n/.exec(r.content);
    expect(m).not.toBeNull();
    const head = r.content.slice(0, m!.index);
    const tail = r.content.slice(m!.index + m![0].length, -'[exit code 0]'.length);
    expect(Number(m![1]!.replace(/,/g, ''))).toBe(20_000_011 - head.length - tail.length);
    expect(head.length / (head.length + tail.length)).toBeCloseTo(0.4, 1);
    expect(r.fullOutput!.length).toBe(20_000_011 + '[exit code 0]'.length);
    expect(r.fullOutput!.startsWith('START\naaa')).toBe(true);
    expect(r.fullOutput!.slice(6, 20_000_006)).toBe('a'.repeat(20_000_000));
    expect(r.fullOutput!.endsWith('a\nEND\n[exit code 0]')).toBe(true);
  });

  it('keeps at most the full-output limit, dropping the middle and saying so', async () => {
    const small = createLocalHand({ workDir: tmpDir(), fullOutputLimitBytes: 1024 * 1024 });
    try {
      // 400,000 numbered lines (~3.1 MB): the first and last lines must survive.
      const r = await small.execute('bash', { command: 'seq 1 400000 | sed "s/^/line /"' });
      const total = 400_000 * 'line '.length + Array.from({ length: 400_000 }, (_, i) => String(i + 1).length + 1).reduce((a, b) => a + b, 0);
      expect(r.details).toMatchObject({ output_chars: total, output_bytes: total, truncated: true });
      const dropped = r.details!.full_output_dropped_bytes as number;
      expect(dropped).toBeGreaterThan(total - 1024 * 1024 - 1);
      expect(r.details!.full_output_note).toMatch(/dropped to keep at most 1 MiB/);
      const full = r.fullOutput!;
      expect(full.length).toBeLessThan(1024 * 1024 + 300);
      expect(full.startsWith('line 1\nline 2\n')).toBe(true);
      expect(full.endsWith('line 399999\nline 400000\n[exit code 0]')).toBe(true);
      expect(full).toMatch(new RegExp(`\\n\\[… ${dropped.toLocaleString('en-US')} bytes dropped here: only the first and last 0\\.5 MiB of the output are kept …\\]\\n`));
      // The model's cut count covers what was dropped too.
      const m = /\[… ([\d,]+) characters cut here; the full output is kept for the UI …\]\n/.exec(r.content)!;
      const kept = r.content.length - m[0].length - '[exit code 0]'.length;
      expect(Number(m[1]!.replace(/,/g, ''))).toBe(total - kept);
      expect(r.content.startsWith('line 1\n')).toBe(true);
      expect(r.content.endsWith('line 400000\n[exit code 0]')).toBe(true);
    } finally {
      await small.dispose();
    }
  });

  it('treats restart as a no-op', async () => {
    const alone = await hand.execute('bash', { restart: true });
    expect(alone.isError).toBe(false);
    expect(alone.content).toMatch(/fresh shell/);
    const withCommand = await hand.execute('bash', { command: 'echo still-runs', restart: true });
    expect(withCommand.content).toBe('still-runs\n[exit code 0]');
  });

  it('does not wait for a background job that keeps the output pipe open', async () => {
    await useUnsandboxed(); // in the sandbox, background jobs end with the call
    const t0 = performance.now();
    const r = await hand.execute('bash', { command: 'sleep 20 & echo started' });
    expect(performance.now() - t0).toBeLessThan(3000);
    expect(r.content).toBe('started\n[exit code 0]');
    const pgid = r.details!.pid as number;
    expect(groupAlive(pgid)).toBe(true); // the job runs on until the hand is disposed
    await hand.dispose();
    expect(groupAlive(pgid)).toBe(false);
  });

  it('dispose kills running commands and later calls are refused', async () => {
    const call = hand.execute('bash', { command: 'sleep 30; echo done > marker3' });
    await sleep(200);
    const t0 = performance.now();
    await hand.dispose();
    expect(performance.now() - t0).toBeLessThan(1500);
    const r = await call;
    expect(r.isError).toBe(true);
    expect(r.content).toMatch(/shut down/);
    expect(groupAlive(r.details!.pid as number)).toBe(false);
    const after = await hand.execute('bash', { command: 'echo hi' });
    expect(after.isError).toBe(true);
    expect(after.content).toMatch(/shut down/);
  });
});

describe('read', () => {
  beforeEach(() => put('notes.txt', 'first\nsecond\nthird\nfourth\n'));

  it('numbers lines like cat -n', async () => {
    const r = await hand.execute('read', { file_path: 'notes.txt' });
    expect(r.isError).toBe(false);
    expect(r.content).toBe('     1\tfirst\n     2\tsecond\n     3\tthird\n     4\tfourth');
    expect(r.details).toMatchObject({ total_lines: 4, bytes: 26 });
  });

  it('reads a view_range, with -1 or 0 meaning to the end', async () => {
    expect((await hand.execute('read', { file_path: 'notes.txt', view_range: [2, 3] })).content).toBe('     2\tsecond\n     3\tthird');
    expect((await hand.execute('read', { file_path: 'notes.txt', view_range: [3, -1] })).content).toBe('     3\tthird\n     4\tfourth');
    expect((await hand.execute('read', { file_path: 'notes.txt', view_range: [4, 0] })).content).toBe('     4\tfourth');
    expect((await hand.execute('read', { file_path: 'notes.txt', view_range: [4, 99] })).content).toBe('     4\tfourth');
    const past = await hand.execute('read', { file_path: 'notes.txt', view_range: [9, 10] });
    expect(past.isError).toBe(true);
    expect(past.content).toMatch(/has only 4 lines/);
    const backwards = await hand.execute('read', { file_path: 'notes.txt', view_range: [3, 2] });
    expect(backwards.isError).toBe(true);
    expect(backwards.content).toMatch(/before start_line/);
    const zero = await hand.execute('read', { file_path: 'notes.txt', view_range: [0, 2] });
    expect(zero.isError).toBe(true);
    const short = await hand.execute('read', { file_path: 'notes.txt', view_range: [1] });
    expect(short.isError).toBe(true);
  });

  it('refuses missing files, directories and binary files', async () => {
    const missing = await hand.execute('read', { file_path: 'nope.txt' });
    expect(missing).toMatchObject({ isError: true, content: 'File not found: nope.txt' });
    fs.mkdirSync(path.join(dir, 'folder'));
    const folder = await hand.execute('read', { file_path: 'folder' });
    expect(folder.isError).toBe(true);
    expect(folder.content).toMatch(/folder is a directory/);
    put('image.bin', Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0x01, 0x02]));
    const bin = await hand.execute('read', { file_path: 'image.bin' });
    expect(bin.isError).toBe(true);
    expect(bin.content).toMatch(/binary/);
    expect(bin.content.length).toBeLessThan(300);
  });

  it('reads an empty file and an absolute path inside the work folder', async () => {
    put('empty.txt', '');
    const empty = await hand.execute('read', { file_path: 'empty.txt' });
    expect(empty.isError).toBe(false);
    expect(empty.content).toMatch(/empty/);
    const abs = await hand.execute('read', { file_path: path.join(dir, 'notes.txt'), view_range: [1, 1] });
    expect(abs).toMatchObject({ isError: false, content: '     1\tfirst' });
  });

  it('caps a long file for the model and keeps the whole listing', async () => {
    put('long.txt', Array.from({ length: 20_000 }, (_, i) => `line ${i + 1}`).join('\n'));
    const r = await hand.execute('read', { file_path: 'long.txt' });
    expect(r.details).toMatchObject({ truncated: true, total_lines: 20_000 });
    expect(r.content.length).toBeLessThanOrEqual(30_000);
    expect(r.content.startsWith('     1\tline 1\n')).toBe(true);
    expect(r.content.endsWith(' 20000\tline 20000')).toBe(true);
    expect(r.content).toMatch(/characters cut here/);
    expect(r.fullOutput!.split('\n')).toHaveLength(20_000);
  });
});

describe('write', () => {
  it('creates parent folders and reports the bytes written', async () => {
    const r = await hand.execute('write', { file_path: 'deep/er/file.txt', content: 'héllo\n' });
    expect(r).toMatchObject({ isError: false, content: 'Wrote 7 bytes to deep/er/file.txt (new file).' });
    expect(get('deep/er/file.txt')).toBe('héllo\n');
    const again = await hand.execute('write', { file_path: 'deep/er/file.txt', content: '' });
    expect(again.content).toBe('Wrote 0 bytes to deep/er/file.txt (replaced its previous 7 bytes).');
    expect(get('deep/er/file.txt')).toBe('');
  });

  it('refuses to write over a directory', async () => {
    fs.mkdirSync(path.join(dir, 'sub'));
    const r = await hand.execute('write', { file_path: 'sub', content: 'x' });
    expect(r.isError).toBe(true);
    expect(r.content).toMatch(/is a directory/);
    expect(fs.statSync(path.join(dir, 'sub')).isDirectory()).toBe(true);
  });
});

describe('edit', () => {
  beforeEach(() => put('code.js', 'let a = 1;\nlet b = 2;\nlog(a);\nlog(a);\nlog(a);\n'));

  it('replaces a unique string and shows the edited lines', async () => {
    const r = await hand.execute('edit', { file_path: 'code.js', old_string: 'let b = 2;', new_string: 'let b = "$&";' });
    expect(r.isError).toBe(false);
    expect(r.content).toMatch(/^Replaced 1 occurrence in code\.js\./);
    expect(r.content).toContain('     2\tlet b = "$&";');
    expect(get('code.js')).toBe('let a = 1;\nlet b = "$&";\nlog(a);\nlog(a);\nlog(a);\n');
  });

  it('refuses a string that occurs more than once, saying how many times', async () => {
    const r = await hand.execute('edit', { file_path: 'code.js', old_string: 'log(a);', new_string: 'log(b);' });
    expect(r.isError).toBe(true);
    expect(r.content).toMatch(/occurs 3 times in code\.js/);
    expect(r.content).toMatch(/replace_all/);
    expect(get('code.js')).toContain('log(a);\nlog(a);\nlog(a);');
  });

  it('replaces every occurrence with replace_all', async () => {
    const r = await hand.execute('edit', { file_path: 'code.js', old_string: 'log(a);', new_string: 'log(b);', replace_all: true });
    expect(r.isError).toBe(false);
    expect(r.content).toMatch(/^Replaced 3 occurrences/);
    expect(get('code.js')).toBe('let a = 1;\nlet b = 2;\nlog(b);\nlog(b);\nlog(b);\n');
  });

  it('reports a string that is not found, an identical replacement and a missing file', async () => {
    const notFound = await hand.execute('edit', { file_path: 'code.js', old_string: 'let c', new_string: 'let d' });
    expect(notFound.isError).toBe(true);
    expect(notFound.content).toMatch(/not found in code\.js/);
    const same = await hand.execute('edit', { file_path: 'code.js', old_string: 'let a', new_string: 'let a' });
    expect(same.isError).toBe(true);
    expect(same.content).toMatch(/are the same/);
    const empty = await hand.execute('edit', { file_path: 'code.js', old_string: '', new_string: 'x' });
    expect(empty.isError).toBe(true);
    const missing = await hand.execute('edit', { file_path: 'gone.js', old_string: 'a', new_string: 'b' });
    expect(missing).toMatchObject({ isError: true, content: 'File not found: gone.js' });
    expect(get('code.js')).toBe('let a = 1;\nlet b = 2;\nlog(a);\nlog(a);\nlog(a);\n');
  });
});

describe('glob', () => {
  beforeEach(() => {
    for (const f of ['src/a.ts', 'src/sub/b.ts', 'src/c.js', 'README.md', '.hidden/x.ts', 'node_modules/pkg/index.ts', 'src/sub/deeper/d.ts']) put(f, 'x');
  });
  const list = async (input: Record<string, unknown>) => {
    const r = await hand.execute('glob', input);
    expect(r.isError, r.content).toBe(false);
    return r.content.split('\n');
  };

  it('matches ** across folders, sorted, skipping node_modules', async () => {
    expect(await list({ pattern: '**/*.ts' })).toEqual(['.hidden/x.ts', 'src/a.ts', 'src/sub/b.ts', 'src/sub/deeper/d.ts']);
    expect(await list({ pattern: 'src/**/*.ts' })).toEqual(['src/a.ts', 'src/sub/b.ts', 'src/sub/deeper/d.ts']);
    expect(await list({ pattern: 'node_modules/**/*.ts' })).toEqual(['node_modules/pkg/index.ts']);
  });

  it('keeps * and ? within one folder and supports {a,b}', async () => {
    expect(await list({ pattern: '*.md' })).toEqual(['README.md']);
    expect(await list({ pattern: 'src/*.{ts,js}' })).toEqual(['src/a.ts', 'src/c.js']);
    expect(await list({ pattern: 'src/?.ts' })).toEqual(['src/a.ts']);
  });

  it('searches under path, listing paths relative to it', async () => {
    expect(await list({ pattern: '**/*.ts', path: 'src/sub' })).toEqual(['b.ts', 'deeper/d.ts']);
  });

  it('says when nothing matches, and refuses a bad path or pattern', async () => {
    const none = await hand.execute('glob', { pattern: '**/*.py' });
    expect(none.isError).toBe(false);
    expect(none.content).toMatch(/No files match/);
    const notDir = await hand.execute('glob', { pattern: '*', path: 'README.md' });
    expect(notDir.isError).toBe(true);
    expect(notDir.content).toMatch(/not a directory/);
    const missing = await hand.execute('glob', { pattern: '*', path: 'nowhere' });
    expect(missing.isError).toBe(true);
    const absolute = await hand.execute('glob', { pattern: '/etc/*' });
    expect(absolute.isError).toBe(true);
    expect(absolute.content).toMatch(/must be relative/);
    const open = await hand.execute('glob', { pattern: 'src/*.{ts,js' });
    expect(open.isError).toBe(true);
  });

  it('lists at most 1000 files with a note saying how many more', async () => {
    fs.mkdirSync(path.join(dir, 'many'));
    for (let i = 0; i < 1005; i++) fs.writeFileSync(path.join(dir, 'many', `f${String(i).padStart(4, '0')}.txt`), '');
    const lines = await list({ pattern: 'many/*.txt' });
    expect(lines).toHaveLength(1001);
    expect(lines[0]).toBe('many/f0000.txt');
    expect(lines[999]).toBe('many/f0999.txt');
    expect(lines[1000]).toMatch(/5 more matching files not listed \(1,005 in all\)/);
  });

  it('translates patterns to regular expressions', () => {
    const m = (p: string, s: string) => globToRegExp(p).test(s);
    expect(m('**/*.ts', 'a.ts')).toBe(true);
    expect(m('**/*.ts', 'a/b/c.ts')).toBe(true);
    expect(m('*.ts', 'a/b.ts')).toBe(false);
    expect(m('a/**/b', 'a/b')).toBe(true);
    expect(m('a/**/b', 'a/x/y/b')).toBe(true);
    expect(m('a/**', 'a/x/y')).toBe(true);
    expect(m('{src,lib}/**/*.{ts,tsx}', 'lib/x/y.tsx')).toBe(true);
    expect(m('{src,lib}/**/*.{ts,tsx}', 'test/y.ts')).toBe(false);
    expect(m('file[0-9].txt', 'file7.txt')).toBe(true);
    expect(m('file[!0-9].txt', 'file7.txt')).toBe(false);
    expect(m('a.b', 'axb')).toBe(false);
    expect(m('(x)+.txt', '(x)+.txt')).toBe(true);
    expect(m('\\*.txt', '*.txt')).toBe(true);
    expect(m('\\*.txt', 'a.txt')).toBe(false);
  });
});

describe('grep', () => {
  beforeEach(() => {
    put('src/one.ts', 'const x = 1;\n// TODO: fix\nconst y = 2;\n');
    put('src/two.ts', 'nothing here\nTODO again\n');
    put('node_modules/dep/index.js', 'TODO in a dependency\n');
    put('.git/config', 'TODO in git\n');
    put('blob.bin', Buffer.concat([Buffer.from('TODO'), Buffer.from([0, 1, 2])]));
  });

  it('lists file:line:text for matches, skipping binaries, node_modules and .git', async () => {
    const r = await hand.execute('grep', { pattern: 'TODO' });
    expect(r.isError).toBe(false);
    expect(r.content).toBe('src/one.ts:2:// TODO: fix\nsrc/two.ts:2:TODO again');
    expect(r.details).toMatchObject({ matches: 2, files_with_matches: 2, skipped_binary: 1 });
  });

  it('takes a RegExp source and an optional file or folder', async () => {
    expect((await hand.execute('grep', { pattern: 'const [xy] = \\d;' })).content).toBe('src/one.ts:1:const x = 1;\nsrc/one.ts:3:const y = 2;');
    expect((await hand.execute('grep', { pattern: 'TODO', path: 'src/two.ts' })).content).toBe('src/two.ts:2:TODO again');
    expect((await hand.execute('grep', { pattern: 'TODO', path: 'src' })).content.split('\n')).toHaveLength(2);
    const none = await hand.execute('grep', { pattern: 'FIXME' });
    expect(none.isError).toBe(false);
    expect(none.content).toMatch(/No matches/);
  });

  it('refuses an invalid regular expression clearly', async () => {
    const r = await hand.execute('grep', { pattern: 'foo(' });
    expect(r.isError).toBe(true);
    expect(r.content).toMatch(/^Invalid regular expression/);
  });

  it('lists at most 500 lines with a note saying how many more', async () => {
    put('big.txt', Array.from({ length: 620 }, (_, i) => `hit ${i + 1}`).join('\n'));
    const r = await hand.execute('grep', { pattern: '^hit', path: 'big.txt' });
    const lines = r.content.split('\n');
    expect(lines).toHaveLength(501);
    expect(lines[499]).toBe('big.txt:500:hit 500');
    expect(lines[500]).toMatch(/120 more matching lines not listed \(620 in all\)/);
  });
});

describe('paths stay inside the work folder', () => {
  let outside: string;
  beforeEach(() => {
    outside = fs.realpathSync(tmpDir('corral-outside-'));
    fs.writeFileSync(path.join(outside, 'secret.txt'), 'outside secret\n');
  });

  it('refuses ../ and absolute paths outside', async () => {
    for (const p of ['../../etc/passwd', '/etc/passwd', '..', path.join(outside, 'secret.txt'), `sub/../../${path.basename(dir)}-x/f`]) {
      const r = await hand.execute('read', { file_path: p });
      expect(r.isError, p).toBe(true);
      expect(r.content).toMatch(/is outside the work folder/);
    }
    const w = await hand.execute('write', { file_path: path.join(outside, 'new.txt'), content: 'x' });
    expect(w.isError).toBe(true);
    expect(fs.existsSync(path.join(outside, 'new.txt'))).toBe(false);
    const w2 = await hand.execute('write', { file_path: '../escape.txt', content: 'x' });
    expect(w2.isError).toBe(true);
    expect(fs.existsSync(path.join(dir, '..', 'escape.txt'))).toBe(false);
    const e = await hand.execute('edit', { file_path: '/etc/passwd', old_string: 'root', new_string: 'toor' });
    expect(e.isError).toBe(true);
    expect((await hand.execute('glob', { pattern: '*', path: '..' })).isError).toBe(true);
    expect((await hand.execute('grep', { pattern: 'root', path: '/etc' })).isError).toBe(true);
  });

  it('refuses symlinks that lead outside, for reading and for writing', async () => {
    fs.symlinkSync(outside, path.join(dir, 'linkdir'));
    fs.symlinkSync(path.join(outside, 'secret.txt'), path.join(dir, 'linkfile'));
    fs.symlinkSync(path.join(outside, 'created-through-link.txt'), path.join(dir, 'dangling'));
    for (const [tool, input] of [
      ['read', { file_path: 'linkfile' }],
      ['read', { file_path: 'linkdir/secret.txt' }],
      ['write', { file_path: 'linkdir/planted.txt', content: 'x' }],
      ['write', { file_path: 'dangling', content: 'x' }],
      ['edit', { file_path: 'linkfile', old_string: 'outside', new_string: 'inside' }],
      ['grep', { pattern: 'secret', path: 'linkdir' }],
    ] as const) {
      const r = await hand.execute(tool, { ...input });
      expect(r.isError, `${tool} ${JSON.stringify(input)}`).toBe(true);
      expect(r.content).toMatch(/outside the work folder \(through a symbolic link\)/);
    }
    expect(fs.readdirSync(outside)).toEqual(['secret.txt']);
    expect(fs.readFileSync(path.join(outside, 'secret.txt'), 'utf8')).toBe('outside secret\n');
    // Walking the tree does not follow them either.
    const grep = await hand.execute('grep', { pattern: 'secret' });
    expect(grep.content).toMatch(/No matches/);
    const glob = await hand.execute('glob', { pattern: '**/*' });
    expect(glob.content).not.toMatch(/secret|linkfile/);
  });

  it('follows symlinks that stay inside', async () => {
    put('real/data.txt', 'inside\n');
    fs.symlinkSync(path.join(dir, 'real'), path.join(dir, 'alias'));
    const r = await hand.execute('read', { file_path: 'alias/data.txt' });
    expect(r).toMatchObject({ isError: false, content: '     1\tinside' });
  });
});
