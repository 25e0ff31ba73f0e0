/**
 * The persistent shell (shell-session.ts, persistent-bash.ts) on this machine's transport
 * (local/shell-process.ts), unsandboxed; the local hand's own tests (local-bash, sandbox) cover
 * it sandboxed too.
 */
import fs from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { localShell } from '../../main/hands/local/shell-process';
import { PersistentBash } from '../../main/hands/persistent-bash';
import { tmpDir } from '../helpers/tmp';
import { pgrep } from '../helpers/processes';

const shells: PersistentBash[] = [];
afterEach(async () => {
  await Promise.all(shells.splice(0).map((s) => s.dispose()));
});
const make = (opts: { replacedLost?: string } = {}) => {
  const dir = fs.realpathSync(tmpDir('corral-pbash-'));
  const b = new PersistentBash({ cwd: dir, startShell: localShell({ cwd: dir }), ...opts });
  shells.push(b);
  return { b, dir };
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const running = (marker: string) => pgrep(marker);

describe('the persistent shell (local, unsandboxed)', () => {
  it('keeps the working folder, variables and background jobs between calls', async () => {
    const { b } = make();
    expect((await b.run({ command: 'cd /tmp && export FOO=1; echo err >&2' }, {})).content).toBe('err\n[exit code 0]');
    expect((await b.run({ command: 'pwd; echo $FOO' }, {})).content).toBe('/tmp\n1\n[exit code 0]');
    await b.run({ command: 'sleep 41.5 >/dev/null 2>&1 &' }, {});
    const r = await b.run({ command: 'jobs' }, {});
    expect(r.content).toMatch(/Running\s+sleep 41\.5/);
    expect(running('sleep 41.5')).not.toBe('');
    // Output without a final newline, and an unbalanced quote, keep the framing intact.
    expect((await b.run({ command: 'printf abc' }, {})).content).toBe('abc\n[exit code 0]');
    expect((await b.run({ command: 'echo "unbalanced' }, {})).content).toMatch(/\[exit code 2\]$/);
    expect((await b.run({ command: 'echo $FOO' }, {})).content).toBe('1\n[exit code 0]');
  });

  it('runs none of a command with a syntax error on any line (bash parses it whole first), and reads on', async () => {
    const { b, dir } = make();
    for (const bad of [`touch ${dir}/a\nif then`, `touch ${dir}/b; f() {`, `touch ${dir}/c\necho "unbalanced`, `touch ${dir}/d\ndone`]) {
      const r = await b.run({ command: bad }, {});
      expect(r.content, bad).toMatch(/syntax error|unexpected/);
      expect(r.details?.exit_code, bad).toBe(2);
    }
    expect(fs.readdirSync(dir)).toEqual([]);
    // Functions and here-documents across lines still work, and so does the shell.
    const r = await b.run({ command: 'greet() { echo "hi $1"; }\ngreet there\ncat <<EOF\n$((1 + 2))\nEOF' }, {});
    expect(r.content).toBe('hi there\n3\n[exit code 0]');
    expect((await b.run({ command: 'greet again' }, {})).content).toBe('hi again\n[exit code 0]');
  });

  it('an abort and a timeout stop only the running command (and the rest of its list); the shell keeps its state', async () => {
    const { b, dir } = make();
    await b.run({ command: 'cd /tmp; export FOO=2; sleep 42.5 >/dev/null 2>&1 &' }, {});
    const ac = new AbortController();
    const call = b.run({ command: `sleep 43.5; touch ${dir}/after` }, { signal: ac.signal });
    for (let i = 0; i < 50 && running('sleep 43.5') === ''; i++) await sleep(50);
    ac.abort();
    const r = await call;
    expect(r.isError).toBe(true);
    expect(r.content).toMatch(/^\[interrupted: .*SIGINT.*the shell and its state are kept\]$/);
    expect(r.details).toMatchObject({ interrupted: true, signal: 'INT' });
    const t = await b.run({ command: 'while :; do :; done', timeout_ms: 300 }, {});
    expect(t.content).toMatch(/^\[timed out after 300 ms; the command was stopped with SIGINT/);
    expect(t.details).toMatchObject({ timed_out: true });
    expect((await b.run({ command: 'pwd; echo $FOO' }, {})).content).toBe('/tmp\n2\n[exit code 0]');
    expect(running('sleep 43.5')).toBe('');
    expect(fs.existsSync(`${dir}/after`)).toBe(false);
    expect(running('sleep 42.5')).not.toBe('');
  });

  it('a command that ignores SIGINT gets its shell killed, and the next result says the state is gone', async () => {
    const { b, dir } = make();
    await b.run({ command: 'cd /tmp; export FOO=3' }, {});
    const r = await b.run({ command: "trap '' INT; sleep 44.5", timeout_ms: 300 }, {});
    expect(r.content).toMatch(/did not stop on SIGINT, so the shell was killed/);
    expect(running('sleep 44.5')).toBe('');
    const next = await b.run({ command: 'pwd; echo "[$FOO]"' }, {});
    expect(next.content).toBe(`[a fresh shell: the previous command ignored SIGINT, so its shell was killed; its working folder, variables and background jobs are gone]\n${dir}\n[]\n[exit code 0]`);
    expect(next.details).toMatchObject({ fresh_shell: expect.any(String) });
  });

  it('restart gives a fresh shell; exit ends it and the next call says so; a replaced hand says so once', async () => {
    const { b, dir } = make({ replacedLost: 'the container died' });
    const first = await b.run({ command: 'cd /tmp; export FOO=4' }, {});
    expect(first.content).toMatch(/^\[a fresh shell: the hand was lost \(the container died\) and replaced;/);
    expect((await b.run({ restart: true }, {})).content).toMatch(/restarted/);
    expect((await b.run({ command: 'pwd; echo "[$FOO]"' }, {})).content).toBe(`${dir}\n[]\n[exit code 0]`);
    const ex = await b.run({ command: 'exit 3' }, {});
    expect(ex.content).toMatch(/the shell ended \(exit code 3\)/);
    expect((await b.run({ command: 'echo ok' }, {})).content).toMatch(/^\[a fresh shell: the previous shell ended \(exit code 3\);.*\nok\n\[exit code 0\]$/);
  });

  it('dispose kills the shell and its background jobs', async () => {
    const { b } = make();
    await b.run({ command: 'sleep 45.5 >/dev/null 2>&1 &' }, {});
    expect(running('sleep 45.5')).not.toBe('');
    await b.dispose();
    await sleep(200);
    expect(running('sleep 45.5')).toBe('');
  });
});
