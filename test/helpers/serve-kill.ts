import type { ChildProcess } from 'node:child_process';
import { readServeState } from '../../main/cli/serve-state';

/**
 * kill -9 of a running `serve`'s host. A serve started with keys in its environment re-executes
 * itself (main/cli/clean-env.ts): the host is the serving process recorded in DATA/serve.json,
 * not the launcher the test spawned, and a SIGKILL to the launcher only makes the host stop
 * cleanly. Kills the host and waits for the launcher to pass its end on.
 */
export async function killServeHost(dataDir: string, launcher: ChildProcess): Promise<void> {
  const pid = readServeState(dataDir)?.pid ?? launcher.pid!;
  const gone = launcher.exitCode !== null || launcher.signalCode !== null ? Promise.resolve() : new Promise((r) => launcher.once('exit', r));
  process.kill(pid, 'SIGKILL');
  await gone;
}
