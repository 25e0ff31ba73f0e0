/**
 * The persistent bash in a container (one exec kept attached), on both engines: the private
 * Docker Engine and Podman of test/hands-env (busybox image: `sh -i`, no bash).
 */
import { describe, expect, it } from 'vitest';
import { createShellHand } from '../../main/hands/remote/shell-hand';
import { persistentBashScenario } from '../helpers/persistent-scenario';
import { BACKENDS, sleep, useEngine } from '../helpers/docker-engines';

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

  it("Ctrl-C goes through the container's init, without an exec; a shell that could not note its group gets it through one", async () => {
    const shell = await t.connect();
    const hand = createShellHand(shell, { workDir: '/work', label: 'box' });
    /** The execs the engine started, and the signals it sent, for this container from `since` (s) until now. */
    const actionsSince = async (since: number) => {
      const stream = (await t.docker.getEvents({ since, until: Math.ceil(Date.now() / 1000), filters: { container: [shell.container.id] } })) as NodeJS.ReadableStream;
      let text = '';
      for await (const c of stream) text += c.toString();
      const actions = text.split('\n').flatMap((l) => (l.trim() ? [String((JSON.parse(l) as { Action?: string }).Action)] : []));
      // Docker says exec_create (with the command), Podman exec.
      return { execs: actions.filter((a) => /^exec(_create|$)/.test(a)).length, kills: actions.filter((a) => a === 'kill').length };
    };
    /** The execs and signals for this container while `f` ran. */
    const execsDuring = async (f: () => Promise<void>) => {
      // From the next whole second: nothing before (the container's set-up, the shell's own exec) counts.
      const since = Math.ceil(Date.now() / 1000);
      await sleep(since * 1000 - Date.now() + 20);
      await f();
      // Events are stamped to the second, and Podman's reach its log late under load: wait for
      // the interrupt's own trace (an exec or a kill), then one more second for anything after it.
      const deadline = Date.now() + 20_000;
      do {
        await sleep(1_100);
        const seen = await actionsSince(since);
        if (seen.execs + seen.kills > 0) break;
      } while (Date.now() < deadline);
      await sleep(1_100);
      return actionsSince(since);
    };
    const interrupted = async () => {
      const ctrl = new AbortController();
      const call = hand.execute('bash', { command: 'sleep 3800' }, { signal: ctrl.signal });
      await sleep(500);
      ctrl.abort();
      const r = await call;
      expect(r.content).toMatch(/stopped with SIGINT.*the shell and its state are kept/);
    };
    expect((await hand.execute('bash', { command: 'export KEEP=1' })).content).toBe('[exit code 0]');
    expect(await execsDuring(interrupted)).toEqual({ execs: 0, kills: 1 });
    expect((await hand.execute('bash', { command: 'echo "[$KEEP]"' })).content).toBe('[1]\n[exit code 0]');
    // /tmp made a file: the next shell cannot note its group, and Ctrl-C takes an exec.
    await hand.execute('bash', { command: 'rm -rf /tmp && touch /tmp' });
    await hand.execute('bash', { restart: true });
    await hand.execute('bash', { command: 'export KEEP=2' });
    expect(await execsDuring(interrupted)).toEqual({ execs: 1, kills: 0 });
    expect((await hand.execute('bash', { command: 'echo "[$KEEP]"' })).content).toBe('[2]\n[exit code 0]');
    await hand.dispose();
    }, 90_000);

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
