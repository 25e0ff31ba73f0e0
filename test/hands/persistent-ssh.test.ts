/** The persistent bash on an SSH hand (one channel kept open), against the real test sshd. */
import { describe, expect, it } from 'vitest';
import { createShellHand } from '../../main/hands/remote/shell-hand';
import { sshHandKind } from '../../main/hands/ssh';
import { persistentBashScenario } from '../helpers/persistent-scenario';
import { connect, loopConfig, remoteProcesses, useSshBackend } from '../helpers/ssh-backend';

useSshBackend();

describe('persistent bash on an SSH hand', () => {
  it('keeps cd, export and background jobs; interrupts and timeouts stop only the command', async () => {
    const config = loopConfig();
    const shell = await connect(config);
    const workDir = sshHandKind.defaultWorkDir(config);
    const hand = createShellHand(shell, { workDir, label: 'ssh-test' });
    try {
      await persistentBashScenario(hand, workDir, 11);
    } finally {
      await hand.dispose();
    }
    // Disposing the hand killed its shell and the shell's background jobs on the host.
    expect(remoteProcesses().filter((p) => /sleep 36\d\d|bash --norc/.test(p.args))).toEqual([]);
  });
});
