/**
 * The programs hands run on this machine (git, tar, rm) through the launcher: their errors, and
 * the large outputs (a repository's pack) joined without holding the host's loop.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { joinInSlices, removeTree, runHere } from '../../main/hands/host-run';

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
