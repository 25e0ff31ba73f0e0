/**
 * A pooled hand's shell, started and set up ahead (prestarted-shell.ts) and adopted by the first
 * `bash` call of the session that takes the hand (PersistentBash `adopt`, ShellSession.adopt): the
 * session's folder and variables go out with its first command, without a round trip of their
 * own, and the shell is the session's from then on. On this machine's bash, in a container
 * (busybox: `sh`, no bash) and over SSH.
 */
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { localShell } from '../../main/hands/local/shell-process';
import { PersistentBash } from '../../main/hands/persistent-bash';
import { prestartShell } from '../../main/hands/prestarted-shell';
import type { StartShell } from '../../main/hands/shell-session';
import { sshHandKind } from '../../main/hands/ssh';
import { BACKENDS, useEngine } from '../helpers/docker-engines';
import { connect, loopConfig, useSshBackend } from '../helpers/ssh-backend';
import { tmpDir } from '../helpers/tmp';

/** What went to and came from the shells a StartShell started, in order. */
function recorded(start: StartShell) {
  const r = { starts: 0, exits: 0, log: [] as ('write' | 'output')[], start: undefined as unknown as StartShell };
  r.start = async (h) => {
    r.starts += 1;
    const p = await start({ onOutput: (c) => (r.log.push('output'), h.onOutput(c)), onExit: (why) => ((r.exits += 1), h.onExit(why)) });
    return { ...p, write: (d: string) => (r.log.push('write'), p.write(d)) };
  };
  return r;
}

async function adoptedScenario(start: StartShell, dirs: { pool: string; session: string }): Promise<void> {
  const r = recorded(start);
  const ahead = await prestartShell(r.start, { cwd: dirs.pool, exports: "export FROM_POOL=1; export SHARED='pool'; " });
  expect(ahead).toBeDefined();
  const b = new PersistentBash({ startShell: r.start, cwd: dirs.session, exports: "export SHARED='the session'; export OWN=2; ", adopt: ahead!.take });
  try {
    const before = r.log.length;
    const first = await b.run({ command: 'pwd; echo "$FROM_POOL $SHARED $OWN"; echo "pid=$$"' }, {});
    expect(first.content).toMatch(new RegExp(`^${dirs.session}\n1 the session 2\npid=\\d+\n\\[exit code 0\\]$`));
    // The shell started ahead, not a new one; the session's folder and variables went out with
    // its first command, before the shell had said anything back.
    expect(r.starts).toBe(1);
    expect(r.log.slice(before, before + 3)).toEqual(['write', 'write', 'output']);
    // Given once: the session keeps it, state and all, and a syntax error still loses nothing.
    expect(ahead!.take()).toBeUndefined();
    await b.run({ command: 'cd /; export KEPT=yes' }, {});
    expect((await b.run({ command: 'echo "unbalanced' }, {})).content).toMatch(/\[exit code 2\]$/);
    const again = await b.run({ command: 'echo "pid=$$ $KEPT $(pwd)"' }, {});
    expect(again.content).toBe(`${/pid=\d+/.exec(first.content)![0]} yes /\n[exit code 0]`);
    // A restart starts a fresh shell in the session's folder.
    await b.run({ restart: true }, {});
    expect((await b.run({ command: 'pwd; echo "[$KEPT]"' }, {})).content).toBe(`${dirs.session}\n[]\n[exit code 0]`);
    expect(r.starts).toBe(2);
  } finally {
    await b.dispose();
  }
}

describe('a shell started ahead, adopted by the first bash call', () => {
  it('on this machine (bash)', async () => {
    const pool = fs.realpathSync(tmpDir('corral-ahead-pool-'));
    const session = fs.realpathSync(tmpDir('corral-ahead-session-'));
    await adoptedScenario(localShell({ cwd: pool }), { pool, session });
  });

  it('a hand disposed before its first bash call ends the shell started ahead', async () => {
    const dir = fs.realpathSync(tmpDir('corral-ahead-'));
    const r = recorded(localShell({ cwd: dir }));
    const ahead = await prestartShell(r.start, { cwd: dir });
    const b = new PersistentBash({ startShell: r.start, cwd: dir, adopt: ahead!.take });
    await b.dispose();
    while (r.exits === 0) await new Promise((res) => setTimeout(res, 20));
    expect(ahead!.take()).toBeUndefined();
    expect(r.starts).toBe(1);
  });
});

describe.each(BACKENDS.filter((b) => b.engine === 'docker'))('a shell started ahead in a container ($engine, sh without bash)', ({ env }) => {
  const t = useEngine(env, 'prestarted');
  it('is adopted by the first bash call', async () => {
    const shell = await t.connect();
    await adoptedScenario(shell.startShell, { pool: '/', session: '/tmp' });
  });
});

describe('a shell started ahead over SSH', () => {
  useSshBackend();
  it('is adopted by the first bash call', async () => {
    const config = loopConfig();
    const shell = await connect(config);
    await adoptedScenario(shell.startShell!, { pool: '/tmp', session: sshHandKind.defaultWorkDir(config) });
  });
});
