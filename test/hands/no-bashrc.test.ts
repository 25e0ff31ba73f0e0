/**
 * Node's stdio pipes are socketpairs, and Debian's bash reads ~/.bashrc when its stdin is a
 * socket and SHLVL is unset: it takes itself for a child of sshd. The sandbox runtime starts
 * `bash -c`, so without care the user's .bashrc ran at every sandbox probe and every local
 * shell's start (a pyenv init in it cost 1.9 s of each serve start here, and once hung a shell).
 * A .bashrc planted in HOME notes every run; neither may make a note.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { tmpDir } from '../helpers/tmp';

describe.runIf(process.platform === 'linux')("the user's ~/.bashrc", () => {
  it('runs neither in the sandbox probe nor when a local hand starts its shell', () => {
    const home = tmpDir('corral-home-');
    const notes = path.join(tmpDir(), 'bashrc-ran');
    fs.writeFileSync(path.join(home, '.bashrc'), `echo "$$ $0" >> ${notes}\n`);
    const script = `
      import { sandboxAvailability } from '${path.resolve(__dirname, '../../main/hands/local/sandbox.ts')}';
      import { createLocalHand } from '${path.resolve(__dirname, '../../main/hands/local.ts')}';
      console.log(JSON.stringify(await sandboxAvailability()));
      const hand = createLocalHand({ workDir: '${tmpDir()}' });
      console.log(JSON.stringify((await hand.execute('bash', { command: 'echo "[$HOME]"' })).content));
      await hand.dispose();
      process.exit(0);`;
    const r = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      cwd: path.resolve(__dirname, '../..'),
      encoding: 'utf8',
      env: { PATH: process.env.PATH, HOME: home },
      timeout: 60_000,
    });
    expect(r.status, r.stderr).toBe(0);
    const [probe, call] = r.stdout.trim().split('\n').slice(-2).map((l) => JSON.parse(l) as unknown);
    expect(probe).toEqual({ ok: true });
    // The shell ran, sandboxed, with the planted HOME: its .bashrc was there to be read.
    expect(call).toBe(`[${home}]\n[exit code 0]`);
    expect(fs.existsSync(notes) ? fs.readFileSync(notes, 'utf8') : '').toBe('');
  }, 90_000);
});
