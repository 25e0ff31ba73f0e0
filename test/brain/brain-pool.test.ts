/**
 * The brain pool: brains are started ahead without a session or a capability, and bound to a
 * session over IPC, which hands them the session's capability then; it is revoked when that
 * brain exits, and the pool starts a replacement.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { BrainPool } from '../../main/brain/brain-pool';
import { firstCallStarted } from '../../main/hands/first-calls';
import type { BrainChild } from '../../main/brain/supervisor';
import { registerBrainEnvProvider } from '../../main/vault/brain-env';

const entry = path.join(__dirname, '../fixtures/bind-brain.ts');
type Bound = { t: 'bound'; startEnv: Record<string, string>; startedAt: number; sessionId: string; env: Record<string, string> };

describe('BrainPool', () => {
  let cleanup: (() => void)[] = [];
  afterEach(() => {
    for (const f of cleanup.splice(0)) f();
  });

  it('binds a brain started ahead to a session, with the capability over IPC only, revoked at exit', async () => {
    const revoked: string[] = [];
    cleanup.push(
      registerBrainEnvProvider({
        envFor: (id) => (id === 'sesn_pool1' ? { env: { ANTHROPIC_BASE_URL: 'http://127.0.0.1:1', ANTHROPIC_API_KEY: 'cap-for-sesn_pool1' }, release: () => revoked.push(id) } : undefined),
      }),
    );
    const pool = new BrainPool({ entry, execArgv: ['--import', 'tsx'], size: 1, refillAfter: 0 });
    cleanup.push(() => pool.stop());
    pool.fill();
    expect(pool.waiting).toBe(1);
    // Let the pooled brain start before any session needs it: until it says it is ready, not a
    // fixed wait (1.5 s was not always enough under CI's load, and the check below then failed).
    for (let i = 0; i < 1500 && pool.ready < 1; i++) await new Promise((r) => setTimeout(r, 20));
    expect(pool.ready).toBe(1);
    const askedAt = performance.timeOrigin + performance.now();
    const brain = pool.spawn('sesn_pool1');
    const exited = new Promise<number | null>((resolve) => brain.onExit((code) => resolve(code)));
    const bound = await new Promise<Bound>((resolve) => brain.onMessage((m) => resolve(m as Bound)));
    expect(bound.sessionId).toBe('sesn_pool1');
    expect(bound.startedAt).toBeLessThan(askedAt);
    expect(bound.env).toEqual({ ANTHROPIC_BASE_URL: 'http://127.0.0.1:1', ANTHROPIC_API_KEY: 'cap-for-sesn_pool1' });
    expect(JSON.stringify(bound.startEnv)).not.toContain('cap-for-sesn_pool1');
    expect(bound.startEnv.ANTHROPIC_API_KEY).toBeUndefined();
    expect(await exited).toBe(0);
    expect(revoked).toEqual(['sesn_pool1']);
    // The taken brain is replaced in the background.
    for (let i = 0; i < 100 && pool.waiting < 1; i++) await new Promise((r) => setTimeout(r, 20));
    expect(pool.waiting).toBe(1);
  });

  it('forks a brain at once when the pool is empty, and kills the waiting ones when stopped', async () => {
    const pool = new BrainPool({ entry, execArgv: ['--import', 'tsx'], size: 0 });
    const brain = pool.spawn('sesn_pool2');
    const bound = await new Promise<Bound>((resolve) => brain.onMessage((m) => resolve(m as Bound)));
    expect(bound.sessionId).toBe('sesn_pool2');
    expect(bound.env).toEqual({});
    const two = new BrainPool({ entry, execArgv: ['--import', 'tsx'], size: 2 });
    two.fill();
    expect(two.waiting).toBe(2);
    two.stop();
    expect(two.waiting).toBe(0);
  });
});

/**
 * Run states ('T' stopped, 'R'/'S' running or sleeping) by pid of the processes started from
 * `fixture` below this one: pooled brains are started by the pool's launcher, a child of this
 * process, so they are its grandchildren.
 */
function brainStates(fixture = 'slow-ready-brain.ts'): Map<number, string> {
  const parentOf = new Map<number, number>();
  const stateOf = new Map<number, string>();
  for (const d of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${d}/stat`, 'utf8');
      const [state, ppid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      parentOf.set(Number(d), Number(ppid));
      stateOf.set(Number(d), state!);
    } catch {
      // Gone meanwhile.
    }
  }
  const below = (pid: number): boolean => {
    for (let p = parentOf.get(pid); p !== undefined && p > 1; p = parentOf.get(p)) if (p === process.pid) return true;
    return false;
  };
  const out = new Map<number, string>();
  for (const [pid, state] of stateOf) {
    if (!below(pid)) continue;
    try {
      if (fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(fixture)) out.set(pid, state);
    } catch {
      // Gone meanwhile.
    }
  }
  return out;
}

const until = async (ok: () => boolean, what: string) => {
  for (let i = 0; i < 500 && !ok(); i++) await new Promise((r) => setTimeout(r, 20));
  if (!ok()) throw new Error(`timed out waiting for ${what}`);
};

describe('BrainPool refills after the first request', () => {
  it.skipIf(process.platform === 'win32')('binds a ready brain, and refills only once its first model request is out', async () => {
    const slowEntry = path.join(__dirname, '../fixtures/ready-brain.ts');
    const pool = new BrainPool({ entry: slowEntry, execArgv: ['--import', 'tsx'], size: 2, firstRequestWaitMs: 60_000 });
    const brains: BrainChild[] = [];
    try {
      pool.fill();
      await until(() => pool.ready === 2, 'two ready brains');
      const a = pool.spawn('sesn_ready_a');
      brains.push(a);
      const seen: unknown[] = [];
      a.onMessage((m) => seen.push(m));
      await until(() => seen.length === 1, 'the bind');
      // Its first request is not out: no replacement yet, however long that takes.
      await new Promise((r) => setTimeout(r, 400));
      expect(pool.waiting).toBe(1);
      a.send({ t: 'events', events: [] });
      await until(() => pool.waiting === 2, 'the refill');
      expect(seen.some((m) => (m as { t: string }).t === 'pooled-ready')).toBe(false);
    } finally {
      for (const b of brains) b.kill();
      pool.stop();
    }
  });

  it.skipIf(process.platform === 'win32')('pauses brains still starting while a bound brain has no request out, and resumes them after', async () => {
    const slowEntry = path.join(__dirname, '../fixtures/slow-ready-brain.ts');
    const pool = new BrainPool({ entry: slowEntry, execArgv: ['--import', 'tsx'], size: 2, firstRequestWaitMs: 60_000 });
    const before = new Set(brainStates().keys());
    const brains: BrainChild[] = [];
    try {
      pool.fill();
      const mine = () => [...brainStates()].filter(([pid]) => !before.has(pid));
      await until(() => mine().length === 2, 'two pooled brains');
      // Both are starting (not ready): the first is bound as it is; the other is paused.
      const a = pool.spawn('sesn_pause_a');
      brains.push(a);
      const seen: { t: string }[] = [];
      a.onMessage((m) => seen.push(m as { t: string }));
      await until(() => mine().some(([, s]) => s === 'T'), 'a paused brain');
      expect(mine().filter(([, s]) => s === 'T').map(([pid]) => pid)).not.toContain(a.pid);
      await until(() => seen.some((m) => m.t === 'bound'), 'the bind');
      a.send({ t: 'events', events: [] });
      await until(() => mine().every(([, s]) => s !== 'T'), 'the paused brain resumed');
      // The bound brain said it was ready after its bind: the supervisor's listener never sees that.
      await until(() => pool.ready >= 1, 'the resumed brain ready');
      expect(seen.some((m) => m.t === 'pooled-ready')).toBe(false);
    } finally {
      for (const b of brains) b.kill();
      pool.stop();
    }
  });

  it.skipIf(process.platform === 'win32')("pauses brains still starting from a bound brain's next user.message until its request is out", async () => {
    const slowEntry = path.join(__dirname, '../fixtures/slow-ready-brain.ts');
    const pool = new BrainPool({ entry: slowEntry, execArgv: ['--import', 'tsx'], size: 1, firstRequestWaitMs: 60_000 });
    const before = new Set(brainStates().keys());
    const brains: BrainChild[] = [];
    try {
      pool.fill();
      const mine = () => [...brainStates()].filter(([pid]) => !before.has(pid));
      await until(() => mine().length === 1, 'a pooled brain');
      const a = pool.spawn('sesn_turn_a');
      brains.push(a);
      const spans: number[] = [];
      a.onMessage((m) => (m as { t: string }).t === 'batch' && spans.push(Date.now()));
      // Its first request: the pool refills, and the new brain starts (3 s of busy start-up).
      a.send({ t: 'events', events: [] });
      const other = () => mine().find(([pid]) => pid !== a.pid);
      await until(() => a.pid !== undefined && pool.waiting === 1 && other() !== undefined && other()![1] !== 'T', 'the refill starting');
      // A new turn: the starting brain waits until the bound brain's request is out (600 ms later).
      const message = { id: 'sevt_2', seq: 2, processed_at: '', type: 'user.message', content: [{ type: 'text', text: 'next' }] };
      a.send({ t: 'events', events: [message] as never });
      await until(() => other()?.[1] === 'T', 'the starting brain paused');
      await until(() => other()?.[1] !== 'T', 'the starting brain resumed');
      expect(spans).toHaveLength(2);
      // An events message without a user's message (a tool result, say) pauses nothing.
      a.send({ t: 'events', events: [] });
      await until(() => spans.length === 3, 'the third request');
      expect(other()?.[1]).not.toBe('T');
    } finally {
      for (const b of brains) b.kill();
      pool.stop();
    }
  });

  it.skipIf(process.platform === 'win32')("forks nothing, and pauses brains still starting, while a pooled hand's first call is in flight", async () => {
    const slowEntry = path.join(__dirname, '../fixtures/slow-ready-brain.ts');
    let forks = 0;
    const pool = new BrainPool({ entry: slowEntry, execArgv: ['--import', 'tsx'], size: 2, onFork: () => (forks += 1) });
    const before = new Set(brainStates().keys());
    const mine = () => [...brainStates()].filter(([pid]) => !before.has(pid));
    const ends: (() => void)[] = [];
    try {
      ends.push(firstCallStarted(60_000));
      pool.fill();
      expect(forks).toBe(0);
      expect(pool.waiting).toBe(0);
      // The call ended: the pool fills.
      ends[0]!();
      expect(forks).toBe(2);
      await until(() => mine().length === 2, 'two pooled brains');
      // Another first call while they start: they are paused until it ends.
      ends.push(firstCallStarted(60_000));
      await until(() => mine().length === 2 && mine().every(([, s]) => s === 'T'), 'both starting brains paused');
      ends[1]!();
      await until(() => mine().every(([, s]) => s !== 'T'), 'the paused brains resumed');
      await until(() => pool.ready === 2, 'both ready');
      expect(forks).toBe(2);
    } finally {
      for (const end of ends) end();
      pool.stop();
    }
  });
});
