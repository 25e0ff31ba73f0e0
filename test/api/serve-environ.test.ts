import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { afterAll, describe, expect, it } from 'vitest';
import { readServeState } from '../../main/cli/serve-state';
import { lockFileOf } from '../../main/data-lock';
import { descendants } from '../helpers/processes';
import { tmpDir } from '../helpers/tmp';

const root = path.resolve(__dirname, '../..');
const children: ReturnType<typeof spawn>[] = [];
afterAll(() => children.forEach((c) => c.kill('SIGTERM')));

const planted = {
  CORRAL_API_KEY: 'planted-api-key-7c2f9e41d0b84a6f93e5c1d2a8b7f6e0',
  ANTHROPIC_API_KEY: 'planted-model-key-5a4b3c2d1e0f',
  CORRAL_VAULT_PASSPHRASE: 'planted-passphrase-0f9e8d7c',
};

const environ = (pid: number) => {
  try {
    return fs.readFileSync(`/proc/${pid}/environ`, 'utf8');
  } catch {
    return '';
  }
};

/** Starts serve with the planted keys (so it re-executes itself) and waits for its link. */
async function startServe(dataDir: string): Promise<{ launcher: ReturnType<typeof spawn>; lines: string[] }> {
  const { CORRAL_API_KEY: _a, ANTHROPIC_API_KEY: _b, ANTHROPIC_AUTH_TOKEN: _c, CORRAL_VAULT_PASSPHRASE: _d, ...base } = process.env;
  const launcher = spawn(process.execPath, ['--import', 'tsx', path.join(root, 'main/serve.ts'), '--port', '0', '--data', dataDir], {
    cwd: root,
    env: { ...base, ...planted },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  children.push(launcher);
  const lines: string[] = [];
  await new Promise<void>((resolve, reject) => {
    readline.createInterface({ input: launcher.stdout! }).on('line', (l) => {
      lines.push(l);
      if (l.includes('open http')) resolve();
    });
    launcher.once('exit', (code) => reject(new Error(`serve exited with ${code}: ${lines.join('\n')}`)));
  });
  return { launcher, lines };
}

const alive = (pid: number) => fs.existsSync(`/proc/${pid}`) && !/\) [ZX] /.test(fs.readFileSync(`/proc/${pid}/stat`, 'utf8'));
const exitOf = (child: ReturnType<typeof spawn>) =>
  new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve({ code: child.exitCode, signal: child.signalCode });
    child.once('exit', (code, signal) => resolve({ code, signal }));
  });

describe.runIf(process.platform === 'linux')('serve and its environment', () => {
  it('serves from a process whose /proc/PID/environ (and its children\'s) holds none of the keys it was given', async () => {
    const dataDir = tmpDir();
    const { launcher, lines } = await startServe(dataDir);
    const state = readServeState(dataDir)!;
    // The serving process is a new one, started by the launcher without the keys.
    expect(state.pid).not.toBe(launcher.pid);
    expect(descendants(launcher.pid!)).toContain(state.pid);
    const serving = [state.pid, ...descendants(state.pid)];
    for (const pid of serving) {
      const env = environ(pid);
      for (const value of Object.values(planted)) expect(env).not.toContain(value);
      for (const name of Object.keys(planted)) expect(env).not.toContain(`${name}=`);
    }
    expect(environ(state.pid)).toContain('PATH='); // it was read: an empty read would prove nothing
    // The launcher lives on to pass signals and the exit code: its initial environment (which
    // it was started with, keys included) has the values blanked in place.
    const launcherEnv = environ(launcher.pid!);
    expect(launcherEnv).toContain('PATH=');
    for (const value of Object.values(planted)) expect(launcherEnv).not.toContain(value);
    // The keys still work: the API key, the model key (the vault reports its source) and the passphrase.
    const url = /API at (\S+)\/v1/.exec(lines.join('\n'))![1]!;
    expect((await fetch(`${url}/v1/agents`, { headers: { 'x-api-key': planted.CORRAL_API_KEY } })).status).toBe(200);
    expect(lines.join('\n')).toMatch(/model key: ANTHROPIC_API_KEY from the environment/);
    expect(lines.join('\n')).toMatch(/vault sealed with .*passphrase/i);
    expect(lines.join('\n')).not.toContain(planted.CORRAL_API_KEY);

    // Killing the launcher (SIGKILL cannot be passed on) stops the serving process too.
    launcher.kill('SIGKILL');
    await new Promise<void>((resolve) => {
      const check = () => (fs.existsSync(`/proc/${state.pid}`) && !fs.readFileSync(`/proc/${state.pid}/stat`, 'utf8').includes(') Z') ? setTimeout(check, 100) : resolve());
      check();
    });
    expect(fs.existsSync(`/proc/${state.pid}`) && !fs.readFileSync(`/proc/${state.pid}/stat`, 'utf8').includes(') Z')).toBe(false);
  }, 60_000);

  // Before the fix the serving process read its pipe with a file stream, whose thread-pool read
  // never returned, and process.exit then waited on it for ever: SIGTERM never ended serve.
  for (const target of ['launcher', 'serving process'] as const) {
    it(`stops on SIGTERM sent to the ${target}: both processes exit 0 and the data folder is free again`, async () => {
      const dataDir = tmpDir();
      const { launcher } = await startServe(dataDir);
      const serving = readServeState(dataDir)!.pid;
      expect(alive(serving)).toBe(true);
      expect(fs.existsSync(lockFileOf(dataDir))).toBe(true);
      process.kill(target === 'launcher' ? launcher.pid! : serving, 'SIGTERM');
      // No time limit here but the test's: a serve that ignores SIGTERM fails it by never exiting.
      expect(await exitOf(launcher)).toEqual({ code: 0, signal: null });
      await new Promise<void>((resolve) => {
        const check = () => (alive(serving) ? setTimeout(check, 50) : resolve());
        check();
      });
      expect(fs.existsSync(lockFileOf(dataDir))).toBe(false);
      expect(readServeState(dataDir)).toBeUndefined();
      // And a new serve takes the folder at once.
      const again = await startServe(dataDir);
      again.launcher.kill('SIGINT');
      expect(await exitOf(again.launcher)).toEqual({ code: 0, signal: null });
      // Two starts of serve under tsx: 25-60 s when CI runs everything at once (one failed at 60 s).
    }, 120_000);
  }
});
