/**
 * The ledger of process groups (main/hands/pgroups.ts) records a group as a hand starts it. Where
 * the leader's start time takes a child process to find (no /proc: `ps`), that must not hold the
 * host's event loop, and a group that ends first must not be left on record.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ProcessGroupLedger, startOfLater } from '../../main/hands/pgroups';
import { tmpDir } from '../helpers/tmp';

/** A start time that is known only when the test says so, as `ps` answers later. */
function laterStart() {
  const asked: number[] = [];
  let answer: (start: string | null) => void = () => {};
  const startTime = (pid: number) => {
    asked.push(pid);
    return new Promise<string | null>((resolve) => (answer = resolve));
  };
  return { asked, startTime, answer: (s: string | null) => answer(s) };
}

const recordOf = (dir: string, pgid: number) => path.join(dir, `${pgid}.json`);

describe('ProcessGroupLedger', () => {
  it('writes a record once a start time that comes later is known, not before', async () => {
    const dir = tmpDir();
    const later = laterStart();
    const ledger = new ProcessGroupLedger(dir, later.startTime);
    const written = ledger.record(4242, 'tok');
    expect(later.asked).toEqual([4242]);
    expect(fs.existsSync(recordOf(dir, 4242))).toBe(false);
    later.answer('Fri Dec  4 10:00:00 2026');
    await written;
    const rec = JSON.parse(fs.readFileSync(recordOf(dir, 4242), 'utf8'));
    expect(rec).toMatchObject({ pgid: 4242, start: 'Fri Dec  4 10:00:00 2026', token: 'tok', host_pid: process.pid });
  });

  it('leaves nothing on record for a group forgotten while its start time was asked for', async () => {
    const dir = tmpDir();
    const later = laterStart();
    const ledger = new ProcessGroupLedger(dir, later.startTime);
    const written = ledger.record(4243, 'tok');
    ledger.forget(4243);
    later.answer('Fri Dec  4 10:00:01 2026');
    await written;
    expect(fs.existsSync(recordOf(dir, 4243))).toBe(false);
    // The same group id, started again later, is recorded as usual.
    const again = ledger.record(4243, 'tok2');
    later.answer('Fri Dec  4 10:00:02 2026');
    await again;
    expect(JSON.parse(fs.readFileSync(recordOf(dir, 4243), 'utf8')).token).toBe('tok2');
  });

  it.runIf(process.platform === 'linux')('on Linux reads the start time from /proc at once and records the group before record() returns', async () => {
    const child = spawn('sleep', ['5'], { detached: true, stdio: 'ignore' });
    try {
      const pid = child.pid!;
      const start = startOfLater(pid);
      expect(typeof start).toBe('string'); // not a promise: no child process asked
      const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
      expect(start).toBe(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]);
      const dir = tmpDir();
      const written = new ProcessGroupLedger(dir).record(pid, 'tok');
      expect(JSON.parse(fs.readFileSync(recordOf(dir, pid), 'utf8')).start).toBe(start);
      await written;
    } finally {
      child.kill('SIGKILL');
    }
  });
});
