import { describe, expect, it } from 'vitest';
import { ReaderTurns } from '../../main/api/reader-turns';

/** Busy-waits `ms` (a page read is synchronous work). */
function spin(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end);
}

/** Resolves at the event loop's next check phase, after the turns' own. */
const nextTurn = () => new Promise((r) => setImmediate(r));

describe('reader turns', () => {
  it('run work at once while the turn has budget left', async () => {
    const turns = new ReaderTurns(5);
    const ran: number[] = [];
    const results = [turns.run(() => (ran.push(1), 'a')), turns.run(() => (ran.push(2), 'b'))];
    expect(ran).toEqual([1, 2]); // synchronously, in this turn
    expect(await Promise.all(results)).toEqual(['a', 'b']);
  });

  it('hold work past the budget for later turns, in order, at least one per turn', async () => {
    const turns = new ReaderTurns(5);
    const ran: string[] = [];
    const all = ['a', 'b', 'c', 'd'].map((name) => turns.run(() => (spin(8), ran.push(name))));
    expect(ran).toEqual(['a']); // 8 ms spent: the rest waits
    expect(turns.queued).toBe(3);
    await nextTurn();
    expect(ran).toEqual(['a', 'b']);
    await nextTurn();
    expect(ran).toEqual(['a', 'b', 'c']);
    await Promise.all(all);
    expect(ran).toEqual(['a', 'b', 'c', 'd']);
    // A new turn has its budget whole again.
    await nextTurn();
    let now = false;
    void turns.run(() => (now = true));
    expect(now).toBe(true);
  });

  it('reject with the error of work that throws, and go on with the rest', async () => {
    const turns = new ReaderTurns(5);
    await expect(turns.run(() => {
      throw new Error('the session was deleted');
    })).rejects.toThrow('the session was deleted');
    void turns.run(() => spin(8));
    const failing = turns.run(() => {
      throw new Error('queued failure');
    });
    const after = turns.run(() => 'still runs');
    await expect(failing).rejects.toThrow('queued failure');
    expect(await after).toBe('still runs');
  });
});
