import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { forkBrain } from '../../main/brain/supervisor';

describe('forkBrain', () => {
  it('a brain killed while the host writes to it: its exit is reported, and nothing is thrown in the host', async () => {
    const uncaught: unknown[] = [];
    const onUncaught = (err: unknown) => uncaught.push(err);
    process.on('uncaughtException', onUncaught);
    try {
      for (let round = 0; round < 5; round++) {
        const child = forkBrain(path.join(__dirname, '../fixtures/dying-brain.ts'), `sesn_round${round}`, ['--import', 'tsx']);
        const exited = new Promise<[number | null, string | null]>((resolve) => child.onExit((code, sig) => resolve([code, sig])));
        await new Promise<void>((resolve) => child.onMessage(() => resolve()));
        // The host is busy between turns of its event loop (appends, tools); a brain that dies
        // meanwhile still looks connected, and the next write fails with EPIPE.
        let exitedYet = false;
        void exited.then(() => (exitedYet = true));
        while (!exitedYet) {
          const busyUntil = Date.now() + 2;
          while (Date.now() < busyUntil);
          child.send({ t: 'events', events: [] });
          await new Promise((r) => setImmediate(r));
        }
        expect(await exited).toEqual([null, 'SIGKILL']);
        child.send({ t: 'events', events: [] }); // after the exit: ignored
      }
      await new Promise((r) => setTimeout(r, 100));
      expect(uncaught).toEqual([]);
    } finally {
      process.off('uncaughtException', onUncaught);
    }
  });
});
