/**
 * Programs the hands run on this machine (git, tar) are started by the launcher, never on the
 * host's event loop, and the host reads their output through the pipes the launcher passes back.
 * The same behaviour is checked for the direct spawn Windows gets.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runProgram, type RunProgramOptions } from '../../main/launcher/run-program';

const env = { PATH: process.env.PATH ?? '/usr/bin:/bin' };

/** Runs `sh -c script`, collecting its output. */
async function sh(script: string, o: Partial<RunProgramOptions> = {}) {
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  const program = runProgram('sh', ['-c', script], { env, onStdout: (c) => out.push(c), onStderr: (c) => err.push(c), ...o });
  const end = await program.done;
  return { ...end, stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8'), bytes: Buffer.concat(out).length };
}

describe.each(['launcher', 'direct'] as const)('runProgram, %s', (via) => {
  it('is started by the launcher, not by the host (or by the host when direct)', async () => {
    const r = await sh('echo $PPID', { via });
    const parent = Number(r.stdout.trim());
    if (via === 'direct') expect(parent).toBe(process.pid);
    else expect(parent).not.toBe(process.pid);
  });

  it('hands over every byte of stdout and stderr, even what is written at once', async () => {
    // Written before the host could have its pipes: nothing written early is lost.
    const runs = await Promise.all(Array.from({ length: 20 }, (_, i) => sh(`printf 'out ${i}'; printf 'err ${i}' >&2`, { via })));
    runs.forEach((r, i) => {
      expect(r.stdout).toBe(`out ${i}`);
      expect(r.stderr).toBe(`err ${i}`);
      expect(r.code).toBe(0);
    });
    const big = await sh('head -c 5000000 /dev/zero; echo done >&2', { via });
    expect(big.bytes).toBe(5_000_000);
    expect(big.stderr).toBe('done\n');
  });

  it('reports exit codes, signals, and a program that is not there', async () => {
    expect((await sh('exit 3', { via })).code).toBe(3);
    expect((await sh('kill -9 $$', { via })).signal).toBe('SIGKILL');
    const missing = runProgram('corral-no-such-program', [], { env, via, onStdout: () => {}, onStderr: () => {} }).done;
    await expect(missing).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('runs in the folder and with the environment it is given, at the niceness asked', async () => {
    // The niceness is set just after the start: read from the shell's own stat a moment later.
    const r = await sh('pwd; echo "$ONLY"; echo "${HOME:-none}"; sleep 0.3; cut -d" " -f19 /proc/$$/stat', { via, cwd: '/tmp', env: { ...env, ONLY: 'this' }, niceness: 7 });
    expect(r.stdout.split('\n').slice(0, 4)).toEqual(['/tmp', 'this', 'none', '7']);
  });

  it('ends a program on abort, on timeout, and on kill (even asked before it has started)', { timeout: 20_000 }, async () => {
    const ctrl = new AbortController();
    const aborted = sh('sleep 30', { via, signal: ctrl.signal });
    setTimeout(() => ctrl.abort(), 100);
    expect(await aborted).toMatchObject({ aborted: true, signal: 'SIGTERM' });
    expect(await sh('sleep 30', { via, timeoutMs: 200 })).toMatchObject({ timedOut: true, signal: 'SIGTERM' });
    const program = runProgram('sleep', ['30'], { env, via, onStdout: () => {}, onStderr: () => {} });
    program.kill('SIGKILL');
    expect(await program.done).toMatchObject({ signal: 'SIGKILL', aborted: false, timedOut: false });
    // One that ignores SIGTERM is killed after the grace period.
    const stubborn = await sh("trap '' TERM; sleep 30 & wait; sleep 30", { via, timeoutMs: 100 });
    expect(stubborn).toMatchObject({ timedOut: true, signal: 'SIGKILL' });
    const already = new AbortController();
    already.abort();
    expect(await sh('echo never', { via, signal: already.signal })).toMatchObject({ aborted: true, stdout: '' });
  });
});

it("the launcher does not keep the host's process alive once its programs are done", async () => {
  const script = `import { runProgram } from ${JSON.stringify(path.join(__dirname, '../../main/launcher/run-program.ts'))};
const end = await runProgram('true', [], { env: { PATH: process.env.PATH }, onStdout() {}, onStderr() {} }).done;
console.log('ran', end.code);`;
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (c) => (out += c));
  const code = await new Promise<number | null>((resolve) => {
    const timer = setTimeout(() => (child.kill('SIGKILL'), resolve(-1)), 20_000);
    child.on('exit', (c) => (clearTimeout(timer), resolve(c)));
  });
  expect(out.trim()).toBe('ran 0');
  expect(code).toBe(0);
}, 30_000);
