/**
 * The sandbox runtime runs on a thread of its own (main/hands/local/sandbox-thread.ts), not on
 * the host's event loop, and still cleans up after itself when the host process exits.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createLocalHand } from '../../main/hands/local';
import { sandboxAvailability } from '../../main/hands/local/sandbox';
import { tmpDir } from '../helpers/tmp';

const root = path.resolve(__dirname, '../..');

describe.runIf(process.platform === 'linux')("the sandbox runtime's thread", () => {
  it("never starts the runtime on the host's thread (it would add its signal handlers to the host's process)", async () => {
    const before = { int: process.listenerCount('SIGINT'), term: process.listenerCount('SIGTERM') };
    expect(await sandboxAvailability()).toEqual({ ok: true });
    const hand = createLocalHand({ workDir: tmpDir() });
    try {
      expect((await hand.execute('bash', { command: 'echo sandboxed' })).content).toBe('sandboxed\n[exit code 0]');
    } finally {
      await hand.dispose();
    }
    // Started on this thread, the runtime registers a clean-up on SIGINT and SIGTERM (which
    // also takes away their default of ending the process).
    expect({ int: process.listenerCount('SIGINT'), term: process.listenerCount('SIGTERM') }).toEqual(before);
  });

  it('a host process that exits with a sandboxed shell running leaves none of the runtime’s sockets behind', async () => {
    // The runtime puts its bridges' sockets in the temporary folder: a fresh one for this process.
    const tmp = tmpDir('corral-sandbox-exit-');
    const work = tmpDir();
    const script = `
      import fs from 'node:fs';
      import { createLocalHand } from ${JSON.stringify(path.join(root, 'main/hands/local.ts'))};
      const hand = createLocalHand({ workDir: ${JSON.stringify(work)} });
      const r = await hand.execute('bash', { command: 'sleep 30 & echo started' });
      console.log(JSON.stringify({ content: r.content, during: fs.readdirSync(${JSON.stringify(tmp)}) }));
      process.exit(0); // no dispose: the shell and its sandbox are still up`;
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: root, env: { ...process.env, TMPDIR: tmp } });
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => (out += c));
    child.stderr.on('data', (c: Buffer) => (err += c));
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    expect(code, err).toBe(0);
    const seen = JSON.parse(out.trim().split('\n').at(-1)!) as { content: string; during: string[] };
    expect(seen.content).toBe('started\n[exit code 0]');
    const sockets = (names: string[]) => names.filter((n) => /^claude-.*\.sock$/.test(n));
    // They were there while it ran (so their absence afterwards says something) …
    expect(sockets(seen.during).length).toBeGreaterThan(0);
    // … and the runtime removed them on its thread before the process ended.
    expect(sockets(fs.readdirSync(tmp))).toEqual([]);
  }, 60_000);
});
