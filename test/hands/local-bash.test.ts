/** The local hand as a whole (its tools, disposal) and its bash tool: output, timeouts, the persistent shell. */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createLocalHand } from '../../main/hands/local';
import { BUILTIN_TOOL_DEFINITIONS } from '../../main/hands/tools/definitions';
import { tmpDir } from '../helpers/tmp';
import { dir, hand, sleep, useUnsandboxed, get, useLocalHand } from '../helpers/local-hand';
import { isRunning } from '../helpers/processes';
import { fullOutputText } from '../../main/hands/full-output';

const running = (cmdline: string) => isRunning(cmdline, true);

useLocalHand();

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
    const r = await hand.execute('bash', { command: 'echo one; sleep 0.05; echo two >&2; sleep 0.05; echo three; (exit 3)' });
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

  it('says when the shell itself was killed, and the next call gets a fresh one that says so', async () => {
    await hand.execute('bash', { command: 'cd /tmp; export KEPT=1' });
    const r = await hand.execute('bash', { command: 'echo before; kill -9 $$' });
    expect(r.content).toMatch(/^before\n\[the shell ended \(.*\): the next call starts a fresh shell/);
    expect(r.details).toMatchObject({ exit_code: null, shell_ended: true });
    const next = await hand.execute('bash', { command: 'pwd; echo "[$KEPT]"' });
    expect(next.content.startsWith('[a fresh shell: the previous shell ended (')).toBe(true);
    expect(next.content.endsWith(`; its working folder, variables and background jobs are gone]\n${dir}\n[]\n[exit code 0]`)).toBe(true);
  });

  for (const sandboxed of [true, false]) {
    it(`on abort stops the running command and the rest of its line, promptly; the shell keeps its state (${sandboxed ? 'sandboxed' : 'unsandboxed'})`, async () => {
      if (!sandboxed) await useUnsandboxed();
      await hand.execute('bash', { command: 'cd /tmp && export KEPT=2' });
      const ac = new AbortController();
      const call = hand.execute('bash', { command: `sleep 30.25; echo done > ${dir}/marker` }, { signal: ac.signal });
      for (let i = 0; i < 60 && !running('sleep 30.25'); i++) await sleep(50);
      expect(running('sleep 30.25')).toBe(true);
      ac.abort();
      const r = await call;
      expect(r.isError).toBe(true);
      expect(r.content).toMatch(/^\[interrupted: the call was aborted after [\d,]+ ms; the command was stopped with SIGINT \(exit code 130\); the shell and its state are kept\]$/);
      expect(r.details).toMatchObject({ interrupted: true, signal: 'INT', exit_code: 130 });
      expect(running('sleep 30.25')).toBe(false);
      expect((await hand.execute('bash', { command: 'pwd; echo $KEPT' })).content).toBe('/tmp\n2\n[exit code 0]');
      expect(fs.existsSync(path.join(dir, 'marker'))).toBe(false);
    });

    it(`a command that ignores SIGINT gets the shell killed, and the next result says the state was lost (${sandboxed ? 'sandboxed' : 'unsandboxed'})`, async () => {
      if (!sandboxed) await useUnsandboxed();
      await hand.execute('bash', { command: 'cd /tmp && export KEPT=3' });
      const r = await hand.execute('bash', { command: "trap '' INT; sleep 30.5", timeout_ms: 300 });
      expect(r.isError).toBe(true);
      expect(r.content).toMatch(/^\[timed out after 300 ms; the command did not stop on SIGINT, so the shell was killed/);
      expect(r.details).toMatchObject({ timed_out: true, signal: 'KILL', shell_ended: true });
      expect(running('sleep 30.5')).toBe(false);
      const next = await hand.execute('bash', { command: 'pwd; echo "[$KEPT]"' });
      expect(next.content).toBe(`[a fresh shell: the previous command ignored SIGINT, so its shell was killed; its working folder, variables and background jobs are gone]\n${dir}\n[]\n[exit code 0]`);
    });
  }

  it('does not start a command when the signal is already aborted', async () => {
    const ac = new AbortController();
    ac.abort();
    const r = await hand.execute('bash', { command: 'echo x > ran' }, { signal: ac.signal });
    expect(r.isError).toBe(true);
    expect(r.content).toMatch(/aborted before/);
    await sleep(100);
    expect(fs.existsSync(path.join(dir, 'ran'))).toBe(false);
  });

  it('times out at the smaller of the call option and timeout_ms, stopping the command', async () => {
    let r = await hand.execute('bash', { command: 'echo started; sleep 30' }, { timeoutMs: 300 });
    expect(r.isError).toBe(true);
    expect(r.content).toBe('started\n[timed out after 300 ms; the command was stopped with SIGINT (exit code 130); the shell and its state are kept]');
    expect(r.details).toMatchObject({ timed_out: true });

    r = await hand.execute('bash', { command: 'sleep 30.75', timeout_ms: 250 }, { timeoutMs: 10_000 });
    expect(r.content).toMatch(/timed out after 250 ms/);
    expect(running('sleep 30.75')).toBe(false);

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
    // In pieces, as collected: 20 MB never joined into one string on the host's loop.
    expect(Array.isArray(r.fullOutput)).toBe(true);
    expect(fullOutputText(r.fullOutput!).length).toBe(20_000_011 + '[exit code 0]'.length);
    expect(fullOutputText(r.fullOutput!).startsWith('START\naaa')).toBe(true);
    expect(fullOutputText(r.fullOutput!).slice(6, 20_000_006)).toBe('a'.repeat(20_000_000));
    expect(fullOutputText(r.fullOutput!).endsWith('a\nEND\n[exit code 0]')).toBe(true);
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
      const full = fullOutputText(r.fullOutput!);
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

  it('restart gives a fresh shell in the work folder', async () => {
    await hand.execute('bash', { command: 'cd /tmp; export KEPT=4' });
    const alone = await hand.execute('bash', { restart: true });
    expect(alone.isError).toBe(false);
    expect(alone.content).toMatch(/^bash session restarted/);
    expect((await hand.execute('bash', { command: 'pwd; echo "[$KEPT]"' })).content).toBe(`${dir}\n[]\n[exit code 0]`);
    await hand.execute('bash', { command: 'export KEPT=5' });
    const withCommand = await hand.execute('bash', { command: 'echo "still-runs[$KEPT]"', restart: true });
    expect(withCommand.content).toBe('still-runs[]\n[exit code 0]');
  });

  it('keeps a background job running between calls, and ends it with the hand', async () => {
    const t0 = performance.now();
    // A duration no other test file uses: sandbox.test.ts runs its own sleeps at the same time.
    const r = await hand.execute('bash', { command: 'sleep 31.37 & echo started' });
    expect(performance.now() - t0).toBeLessThan(3000);
    expect(r.content).toBe('started\n[exit code 0]');
    expect((await hand.execute('bash', { command: 'jobs' })).content).toMatch(/Running\s+sleep 31\.37 &/);
    // `jobs` lists the job as soon as bash has forked it; the child becomes `sleep` only when it execs, which under load can come later.
    for (let i = 0; i < 60 && !running('sleep 31.37'); i++) await sleep(50);
    expect(running('sleep 31.37')).toBe(true);
    await hand.dispose();
    for (let i = 0; i < 20 && running('sleep 31.37'); i++) await sleep(50);
    expect(running('sleep 31.37')).toBe(false);
  });

  it('dispose kills running commands and later calls are refused', async () => {
    const call = hand.execute('bash', { command: 'sleep 31.5; echo done > marker3' });
    for (let i = 0; i < 60 && !running('sleep 31.5'); i++) await sleep(50);
    await hand.dispose();
    const r = await call;
    expect(r.isError).toBe(true);
    expect(r.content).toMatch(/shut down/);
    expect(running('sleep 31.5')).toBe(false);
    const after = await hand.execute('bash', { command: 'echo hi' });
    expect(after.isError).toBe(true);
    expect(after.content).toMatch(/shut down/);
  });
});
