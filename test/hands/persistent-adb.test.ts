/**
 * The persistent bash on a device (one shell-protocol stream kept open), through the real adb
 * server and the test device of test/hands-env/adb.sh.
 */
import { describe, it } from 'vitest';
import { createShellHand } from '../../main/hands/remote/shell-hand';
import { persistentBashScenario } from '../helpers/persistent-scenario';
import { connect, useAdbBackend, workDir } from '../helpers/adb-backend';

useAdbBackend();

describe('persistent bash on an adb hand', () => {
  it('keeps cd, export and background jobs; interrupts and timeouts stop only the command', async () => {
    const s = await connect();
    const hand = createShellHand(s, { workDir, label: 'device' });
    try {
      await persistentBashScenario(hand, workDir, 33);
    } finally {
      await hand.dispose();
    }
  });
});
