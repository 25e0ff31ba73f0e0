/**
 * The persistent bash in a container (one exec kept attached), on both engines: the private
 * Docker Engine and Podman of test/hands-env (busybox image: `sh -i`, no bash).
 */
import { describe, expect, it } from 'vitest';
import { createShellHand } from '../../main/hands/remote/shell-hand';
import { persistentBashScenario } from '../helpers/persistent-scenario';
import { BACKENDS, useEngine } from '../helpers/docker-engines';

describe.each(BACKENDS)('persistent bash on $engine', ({ env }) => {
  const t = useEngine(env, 'persistent');

  it('keeps cd, export and background jobs; interrupts and timeouts stop only the command', async () => {
    const shell = await t.connect();
    const hand = createShellHand(shell, { workDir: '/work', label: 'box' });
    await persistentBashScenario(hand, '/work', 22);
    // One exec for the shell, not one per call: the shell process stays the same.
    const a = await hand.execute('bash', { command: 'echo $$' });
    const b = await hand.execute('bash', { command: 'echo $$' });
    expect(a.content).toBe(b.content);
    await hand.dispose();
  });

  it('a container that dies takes the shell along, and the call says the state is gone', async () => {
    const shell = await t.connect();
    const hand = createShellHand(shell, { workDir: '/work', label: 'box' });
    await hand.execute('bash', { command: 'cd /tmp; export FOO=1' });
    const call = hand.execute('bash', { command: 'sleep 3700' });
    await new Promise((r) => setTimeout(r, 500));
    await shell.container.kill();
    const r = await call;
    expect(r.isError).toBe(true);
    expect(r.content).toMatch(/^\[the hand was lost: container exited with code 137/);
    const next = await hand.execute('bash', { command: 'pwd' });
    expect(next.content).toMatch(/^The hand box is gone: .*The next call will get a fresh one \(with a fresh shell: this one's working folder, variables and background jobs are gone\)\.$/);
    await hand.dispose();
  });
});
