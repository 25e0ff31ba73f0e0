import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createLocalHand, type LocalHand } from '../../main/hands/local';
import { OFF_LOOP_BYTES } from '../../main/hands/local/files';
import { offLoopStats } from '../../main/hands/local/off-loop/lanes';
import { tmpDir } from '../helpers/tmp';
import { fullOutputText } from '../../main/hands/full-output';

/**
 * The local hand's slow work runs on worker threads: a search can be stopped at any point (even
 * inside a regular expression that would backtrack for hours) and frees its worker; large files
 * are read and edited there with the same results as small ones inline.
 */

let dir: string;
let hand: LocalHand;
beforeEach(() => {
  dir = fs.realpathSync(tmpDir('corral-off-loop-'));
  hand = createLocalHand({ workDir: dir });
});
afterEach(async () => {
  await hand.dispose();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** 2^40 backtracking steps for /^(a+)+$/: hours on the host's thread, if nothing stops it. */
const RUNAWAY_LINE = `${'a'.repeat(40)}!\n`;
const RUNAWAY_PATTERN = '^(a+)+$';

async function until(what: string, check: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await sleep(10);
  }
}

describe('a search on a worker thread', () => {
  beforeEach(() => fs.writeFileSync(path.join(dir, 'runaway.txt'), RUNAWAY_LINE));

  it('is interrupted by an abort, frees its worker, and the next search runs', async () => {
    const ac = new AbortController();
    const call = hand.execute('grep', { pattern: RUNAWAY_PATTERN }, { signal: ac.signal });
    let ticks = 0;
    const ticker = setInterval(() => ticks++, 5);
    // The host's loop keeps turning while the regular expression runs.
    await until('the host has turned its loop during the search', () => ticks >= 10);
    clearInterval(ticker);
    expect(offLoopStats().search.busy).toBe(1);
    ac.abort();
    const r = await call;
    expect(r.isError).toBe(true);
    expect(r.content).toMatch(/^\[interrupted: the call was aborted after \d+ ms; the grep search was stopped\]$/);
    expect(r.details).toMatchObject({ interrupted: true });
    expect(offLoopStats().search.busy).toBe(0);
    // The terminated thread exits (it was stopped inside the regular expression).
    await until('the stopped worker has exited', () => offLoopStats().search.stopping === 0);

    const next = await hand.execute('grep', { pattern: 'a!' });
    expect(next).toMatchObject({ isError: false, content: `runaway.txt:1:${RUNAWAY_LINE.trimEnd()}` });
  });

  it('stops at the call timeout and says so', async () => {
    const r = await hand.execute('grep', { pattern: RUNAWAY_PATTERN }, { timeoutMs: 300 });
    expect(r).toMatchObject({ isError: true, content: '[timed out after 300 ms; the grep search was stopped]', details: { timed_out: true } });
    expect(offLoopStats().search.busy).toBe(0);
  });

  it('is stopped when the hand is disposed', async () => {
    const call = hand.execute('grep', { pattern: RUNAWAY_PATTERN });
    await until('the search runs', () => offLoopStats().search.busy === 1);
    await hand.dispose();
    const r = await call;
    expect(r.isError).toBe(true);
    expect(r.content).toMatch(/^\[interrupted: the hand was shut down after \d+ ms; the grep search was stopped\]$/);
    expect(offLoopStats().search.busy).toBe(0);
  });
});

describe('large files on a worker thread', () => {
  const lines = Array.from({ length: 120_000 }, (_, i) => `line ${i + 1} of a file too large to handle on the host's loop`);
  beforeEach(() => {
    fs.writeFileSync(path.join(dir, 'big.txt'), `${lines.join('\n')}\n`);
    expect(fs.statSync(path.join(dir, 'big.txt')).size).toBeGreaterThan(OFF_LOOP_BYTES);
  });

  it('reads a large file whole and in ranges, as a small one is read', async () => {
    const whole = await hand.execute('read', { file_path: 'big.txt' });
    expect(whole.details).toMatchObject({ truncated: true, total_lines: 120_000, start_line: 1, end_line: 120_000 });
    expect(whole.content.startsWith('     1\tline 1 of')).toBe(true);
    expect(fullOutputText(whole.fullOutput!).split('\n')).toHaveLength(120_000);
    expect(fullOutputText(whole.fullOutput!).endsWith('120000\tline 120000 of a file too large to handle on the host\'s loop')).toBe(true);

    const part = await hand.execute('read', { file_path: 'big.txt', view_range: [99_999, 100_000] });
    expect(part.content).toBe(` 99999\t${lines[99_998]}\n100000\t${lines[99_999]}`);
    // An input error raised on the worker reaches the model as it does from the host.
    const bad = await hand.execute('read', { file_path: 'big.txt', view_range: [0, 5] });
    expect(bad).toMatchObject({ isError: true, content: 'Invalid input for read: view_range start_line must be 1 or more (lines are numbered from 1).' });
  });

  it('edits a large file: writes the change, and refuses an ambiguous one without writing', async () => {
    const r = await hand.execute('edit', { file_path: 'big.txt', old_string: 'line 60000 of', new_string: 'LINE SIXTY THOUSAND of' });
    expect(r.isError, r.content).toBe(false);
    expect(r.content).toMatch(/^Replaced 1 occurrence in big\.txt\. Lines 59997-60003 now read:\n/);
    expect(r.content).toContain(' 60000\tLINE SIXTY THOUSAND of a file');
    const after = fs.readFileSync(path.join(dir, 'big.txt'), 'utf8').split('\n');
    expect(after[59_999]).toBe("LINE SIXTY THOUSAND of a file too large to handle on the host's loop");
    expect(after[59_998]).toBe(lines[59_998]);
    expect(after).toHaveLength(120_001);

    const before = fs.readFileSync(path.join(dir, 'big.txt'));
    const ambiguous = await hand.execute('edit', { file_path: 'big.txt', old_string: 'of a file', new_string: 'in a file' });
    expect(ambiguous).toMatchObject({ isError: true, details: { occurrences: 120_000 } });
    expect(fs.readFileSync(path.join(dir, 'big.txt')).equals(before)).toBe(true);
  });
});
