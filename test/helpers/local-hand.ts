/**
 * Shared setup of the local hand tests (test/hands/local-*.test.ts): a fresh work folder and
 * sandboxed hand per test (useLocalHand), file helpers, and process-group probes.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, expect } from 'vitest';
import { createLocalHand, type LocalHand } from '../../main/hands/local';
import { tmpDir } from './tmp';

export let dir: string;
export let hand: LocalHand;

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Swaps the hand for one without the sandbox: these tests look at how the runner handles the
 * command's own process group on this machine, which only an unsandboxed command shows as it
 * is (in the sandbox the group holds bubblewrap, and the command lives in a PID namespace that
 * ends with it: test/hands/sandbox.test.ts covers that side).
 */
export async function useUnsandboxed(): Promise<void> {
  await hand.dispose();
  hand = createLocalHand({ workDir: dir, sandbox: false });
}
export const put = (rel: string, content: string | Buffer) => {
  fs.mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
  fs.writeFileSync(path.join(dir, rel), content);
};
export const get = (rel: string) => fs.readFileSync(path.join(dir, rel), 'utf8');

/**
 * Running (non-zombie) members of process group `pgid`, from ps. Killed orphans are reparented
 * to init, which may be slow to reap them; a zombie is dead, so it does not count.
 */
export function liveMembers(pgid: number): string[] {
  const out = execFileSync('ps', ['-eo', 'pid=,pgid=,stat=,args='], { encoding: 'utf8' });
  return out.split('\n').filter((line) => {
    const [, g, stat] = line.trim().split(/\s+/);
    return Number(g) === pgid && !stat!.startsWith('Z');
  });
}

/** Is any process of this group running? (process.kill(-pgid, 0), then ps to look past zombies.) */
export function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
  } catch (err) {
    expect((err as NodeJS.ErrnoException).code).toBe('ESRCH');
    return false;
  }
  return liveMembers(pgid).length > 0;
}

/** Registers the hooks of every local hand test: a fresh work folder and hand per test, disposed after. */
export function useLocalHand(): void {
  beforeEach(() => {
    dir = fs.realpathSync(tmpDir('corral-hand-'));
    hand = createLocalHand({ workDir: dir });
  });
  afterEach(async () => {
    await hand.dispose();
  });
}
