/**
 * The brain pool: brains are started ahead without a session or a capability, and bound to a
 * session over IPC, which hands them the session's capability then; it is revoked when that
 * brain exits, and the pool starts a replacement.
 */
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { BrainPool } from '../../main/brain/brain-pool';
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
    const pool = new BrainPool({ entry, execArgv: ['--import', 'tsx'], size: 1, refillDelayMs: 0 });
    cleanup.push(() => pool.stop());
    pool.fill();
    expect(pool.waiting).toBe(1);
    // Let the pooled brain start before any session needs it.
    await new Promise((r) => setTimeout(r, 1500));
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
