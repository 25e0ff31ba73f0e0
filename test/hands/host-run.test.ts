/**
 * The programs hands run on this machine (git, tar, rm) through the launcher: their errors, and
 * the large outputs (a repository's pack) joined without holding the host's loop.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { gitRunEnv, joinInSlices, removeTree, runHere } from '../../main/hands/host-run';

describe('runHere', () => {
  it('returns stdout whole, however large, and says why a run failed', async () => {
    const out = await runHere('sh', ['-c', 'yes abcdefghi | head -c 3000000'], { what: 'x' });
    expect(out.equals(Buffer.from('abcdefghi\n'.repeat(300_000)))).toBe(true);
    await expect(runHere('sh', ['-c', 'echo bad thing >&2; exit 4'], { what: 'the step' })).rejects.toThrow('the step failed (exit code 4): bad thing');
    await expect(runHere('corral-no-such-program', [], { what: 'x' })).rejects.toThrow('corral-no-such-program is not installed on this machine');
    await expect(runHere('head', ['-c', '200000', '/dev/zero'], { what: 'x', maxBytes: 100_000, tooBig: 'too big to ship' })).rejects.toThrow('too big to ship');
    const ctrl = new AbortController();
    setTimeout(() => ctrl.abort(), 100);
    await expect(runHere('sleep', ['30'], { what: 'the wait', signal: ctrl.signal })).rejects.toThrow('the wait was stopped');
  });

  it('gives a program the allowlisted environment, git and tar their own on top, never what the host holds', async () => {
    const planted = `corral-planted-${crypto.randomUUID()}`;
    process.env.CORRAL_TEST_PLANTED_SECRET = planted;
    const agent = process.env.SSH_AUTH_SOCK;
    process.env.SSH_AUTH_SOCK = '/tmp/corral-test-agent.sock';
    try {
      const envOf = async (env?: Record<string, string>) => (await runHere('env', [], { what: 'env', ...(env ? { env } : {}) })).toString('utf8');
      const plain = await envOf();
      expect(plain).toContain(`PATH=${process.env.PATH}\n`);
      expect(plain).not.toContain('GIT_TERMINAL_PROMPT');
      expect(plain).not.toContain('SSH_AUTH_SOCK');
      const git = await envOf(gitRunEnv());
      expect(git).toContain('GIT_TERMINAL_PROMPT=0\n');
      expect(git).toContain(`SSH_AUTH_SOCK=${process.env.SSH_AUTH_SOCK}\n`);
      for (const out of [plain, git]) expect(out).not.toContain(planted);
      expect(await envOf({ ONLY: 'this', PATH: process.env.PATH! })).toBe(`ONLY=this\nPATH=${process.env.PATH}\n`);
    } finally {
      delete process.env.CORRAL_TEST_PLANTED_SECRET;
      if (agent === undefined) delete process.env.SSH_AUTH_SOCK;
      else process.env.SSH_AUTH_SOCK = agent;
    }
  });
});

describe('joinInSlices', () => {
  it('equals Buffer.concat, and lets the loop run while it copies a large output', async () => {
    const chunks = Array.from({ length: 200 }, (_, i) => crypto.randomBytes(65_536 + (i % 7) * 1000));
    const total = chunks.reduce((n, c) => n + c.length, 0);
    let turns = 0;
    const tick = setInterval(() => turns++, 0);
    const joined = await joinInSlices(chunks, total);
    clearInterval(tick);
    expect(joined.equals(Buffer.concat(chunks))).toBe(true);
    // 13 MB at 1 MB a slice: timers ran between slices (one Buffer.concat gives them none).
    expect(turns).toBeGreaterThan(3);
    expect((await joinInSlices([Buffer.from('a'), Buffer.from('bc')], 3)).toString()).toBe('abc');
  });
});

describe('removeTree', () => {
  it('removes a folder with read-only files and nested folders, and a missing one quietly', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'corral-remove-'));
    for (let i = 0; i < 50; i++) {
      fs.mkdirSync(path.join(dir, `d${i % 5}`, 'x'), { recursive: true });
      fs.writeFileSync(path.join(dir, `d${i % 5}`, 'x', `f${i}`), 'data', { mode: 0o444 });
    }
    await removeTree(dir);
    expect(fs.existsSync(dir)).toBe(false);
    await expect(removeTree(dir)).resolves.toBeUndefined();
  });
});
