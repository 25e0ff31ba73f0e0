/**
 * A repository already on the hand from an earlier provisioning of the same session (the hand
 * was lost, or the host restarted, and the work folder stayed), told apart by its `origin`:
 * this session's git-proxy route (capabilities are stable, proxy-caps.ts), or, for a clone
 * without credentials, the repository's own URL. It is kept as it is — never cloned or unpacked
 * over, which would throw away the agent's uncommitted work — and only a proxied `origin` is
 * pointed at the git proxy as the hand reaches it now (an SSH hand's forwarded port changes
 * with each connection).
 */
import fs from 'node:fs';
import path from 'node:path';
import { gitRunEnv, runHere } from './host-run';
import { shq } from './remote/shell-hand';
import type { ResourceTarget } from './resources';
import { relayRemote, runsSandboxed } from './local/sandbox-git';


/** What was found: nothing (clone as usual), or a kept clone and where its origin points now. */
export type Kept = { kept: false } | { kept: true; remote?: string; note?: string };

export async function keepExistingClone(
  dest: string,
  target: ResourceTarget,
  route: { port: number; path: string; boundPath?: string } | undefined,
  signal?: AbortSignal,
  repoUrl?: string,
): Promise<Kept> {
  if (!route) return repoUrl !== undefined && (await isCloneOf(dest, target, repoUrl, signal)) ? { kept: true } : { kept: false };
  if (!target.shell) {
    const dir = path.resolve(target.workDir, dest);
    const config = await fs.promises.readFile(path.join(dir, '.git', 'config'), 'utf8').catch(() => '');
    // A sandboxed hand's clone names the sandbox's relay; the work folder is the session's own.
    const relay = route.boundPath ? relayRemote(route.boundPath) : undefined;
    if (!config.includes(route.path) && !(relay && config.includes(relay))) return { kept: false };
    const url = relay && (await runsSandboxed(target.hand)) ? relay : `http://127.0.0.1:${route.port}${route.path}`;
    try {
      await runHere('git', ['-C', dir, 'remote', 'set-url', 'origin', url], { signal, what: 'git remote set-url', env: gitRunEnv() });
      await runHere('git', ['-C', dir, 'config', 'remote.origin.proxy', ''], { signal, what: 'git config', env: gitRunEnv() });
      return { kept: true, remote: url };
    } catch (err) {
      return { kept: true, note: `origin could not be re-pointed: ${(err as Error).message.slice(0, 300)}` };
    }
  }
  const shell = target.shell;
  const probe = await shell.exec(`grep -qF -- ${shq(route.path)} ${shq(dest)}/.git/config`, { cwd: target.workDir, signal });
  if (probe.exitCode !== 0) return { kept: false };
  const reach = await shell.reachHost?.(route.port).catch(() => undefined);
  if (!reach) return { kept: true, note: 'the hand cannot reach the git proxy now' };
  const url = `http://${reach.host}:${reach.port}${route.path}`;
  const d = shq(dest);
  const set = await shell.exec(`git -C ${d} remote set-url origin ${shq(url)} && git -C ${d} config remote.origin.proxy ''`, { cwd: target.workDir, signal });
  return set.exitCode === 0 ? { kept: true, remote: url } : { kept: true, note: 'origin could not be re-pointed (no git on the hand?)' };
}

/** Whether `dest` on the hand holds a clone whose origin is `url` (a clone without credentials). */
async function isCloneOf(dest: string, target: ResourceTarget, url: string, signal?: AbortSignal): Promise<boolean> {
  const line = new RegExp(`^\\s*url = ${url.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\s*$`, 'm');
  if (!target.shell) {
    const config = await fs.promises.readFile(path.join(path.resolve(target.workDir, dest), '.git', 'config'), 'utf8').catch(() => '');
    return line.test(config);
  }
  let config = '';
  const onOutput = (chunk: Buffer, stream: 'stdout' | 'stderr') => void (stream === 'stdout' && config.length < 65_536 && (config += chunk.toString('utf8')));
  const probe = await target.shell.exec(`cat -- ${shq(dest)}/.git/config`, { cwd: target.workDir, signal, onOutput }).catch(() => undefined);
  return probe?.exitCode === 0 && line.test(config);
}
