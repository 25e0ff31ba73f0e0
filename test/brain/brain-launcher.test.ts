/**
 * The brain launcher: the host forks it once and it starts every brain, so the host's event loop
 * never waits for a process start. Each brain talks to the host over its own socket.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { BrainLauncher, type LaunchedBrain } from '../../main/brain/brain-launcher';

const echo = path.join(__dirname, '../fixtures/echo-brain.ts');
const argv = ['--import', 'tsx', echo];

const parentOf = (pid: number): number | undefined => {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    return undefined;
  }
};
const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};
const until = async (ok: () => boolean, what: string, ms = 10_000) => {
  for (const end = Date.now() + ms; !ok() && Date.now() < end; ) await new Promise((r) => setTimeout(r, 20));
  if (!ok()) throw new Error(`timed out waiting for ${what}`);
};
/** The next message from `brain` that passes `ok`. */
const next = (brain: LaunchedBrain, ok: (m: Record<string, unknown>) => boolean = () => true) =>
  new Promise<Record<string, unknown>>((resolve) => {
    const l = (m: unknown) => ok(m as Record<string, unknown>) && (brain.off('message', l), resolve(m as Record<string, unknown>));
    brain.on('message', l);
  });
const exitOf = (brain: LaunchedBrain) => new Promise<[number | null, string | null]>((resolve) => brain.once('exit', (code, signal) => resolve([code, signal])));

describe.skipIf(process.platform === 'win32')('BrainLauncher', () => {
  const launchers: BrainLauncher[] = [];
  afterEach(() => {
    for (const l of launchers.splice(0)) l.stop();
  });

  it('starts brains as its own children, not the host’s; messages go both ways; exit codes come back', async () => {
    const launcher = new BrainLauncher();
    launchers.push(launcher);
    const brains = [0, 1, 2].map(() => launcher.spawn(process.execPath, argv, process.env));
    // Sent before the brain has started: waits for it.
    const first = next(brains[0]!, (m) => m.echo !== undefined);
    brains[0]!.send({ early: 'é😀' }, () => {});
    const ups = await Promise.all(brains.map((b) => next(b, (m) => m.up !== undefined)));
    expect((await first).echo).toEqual({ early: 'é😀' });
    for (const [i, b] of brains.entries()) {
      expect(ups[i]!.up).toBe(b.pid);
      // The host's only child is the launcher: no brain is forked from the host.
      expect(parentOf(b.pid!)).toBe(launcher.pid);
    }
    expect(launcher.pid).not.toBe(process.pid);
    expect(parentOf(launcher.pid!)).toBe(process.pid);
    // A message of several megabytes arrives whole (framing across many socket reads).
    const big = 'x'.repeat(3 * 1024 * 1024) + '\n"';
    const back = next(brains[1]!, (m) => m.echo !== undefined);
    brains[1]!.send({ big }, () => {});
    expect(((await back).echo as { big: string }).big).toBe(big);
    // Exits as the launcher saw them: a code, a signal; then 'close', and the brain is not connected.
    const [e0, e1] = [exitOf(brains[0]!), exitOf(brains[1]!)];
    const closed = new Promise((r) => brains[0]!.once('close', r));
    brains[0]!.send({ exit: 7 }, () => {});
    brains[1]!.kill('SIGKILL');
    expect(await e0).toEqual([7, null]);
    expect(await e1).toEqual([null, 'SIGKILL']);
    await closed;
    expect(brains[0]!.connected).toBe(false);
    expect(brains[0]!.exitCode).toBe(7);
    // A program that cannot be started: 'error' then 'close', as a ChildProcess does.
    const bad = launcher.spawn('/nonexistent/corral-node', [], process.env);
    const badClosed = new Promise((r) => bad.once('close', r));
    const err = await new Promise<Error>((resolve) => bad.once('error', resolve));
    expect(err.message).toMatch(/ENOENT/);
    await badClosed;
  });

  it('a launcher that dies loses no running brain; the next brain gets a new launcher', async () => {
    const launcher = new BrainLauncher();
    launchers.push(launcher);
    const a = launcher.spawn(process.execPath, argv, process.env);
    await next(a, (m) => m.up !== undefined);
    const old = launcher.pid!;
    process.kill(old, 'SIGKILL');
    await until(() => launcher.pid === undefined, 'the launcher seen gone');
    // Its brain still answers: the wire never went through the launcher.
    const echoed = next(a, (m) => m.echo !== undefined);
    a.send({ still: 'here' }, () => {});
    expect((await echoed).echo).toEqual({ still: 'here' });
    const b = launcher.spawn(process.execPath, argv, process.env);
    await next(b, (m) => m.up !== undefined);
    expect(launcher.pid).toBeDefined();
    expect(launcher.pid).not.toBe(old);
    // The orphan's exit is seen when its socket closes (its launcher cannot report it).
    const gone = exitOf(a);
    a.kill('SIGKILL');
    expect(await gone).toEqual([null, null]);
    b.kill('SIGKILL');
  });

  it('a host killed outright leaves neither its launcher nor its brains running', async () => {
    const host = spawn(process.execPath, ['--import', 'tsx', path.join(__dirname, '../fixtures/launcher-host.ts')], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    host.stdout.on('data', (d) => (out += d));
    await until(() => /PIDS( \d+){3}/.test(out), 'the host’s brains', 30_000);
    const pids = out.match(/PIDS ((?:\d+ ?){3})/)![1]!.trim().split(' ').map(Number);
    expect(pids.every(alive)).toBe(true);
    host.kill('SIGKILL');
    await until(() => !pids.some(alive), 'the launcher and brains to leave');
  });
});
