/**
 * A repository cloned for a sandboxed local hand: its `origin` is the sandbox's git relay
 * (sandbox-relays.ts), with the repository in the path and no capability, since the hand reaches
 * the git proxy only through its own gateway name.
 */
import fsp from 'node:fs/promises';
import path from 'node:path';
import type { Hand } from '../types';
import type { SandboxState } from './sandbox';
import { SANDBOX_GIT_PORT } from './sandbox-relays';

/** Whether a hand is a local one whose commands run in the sandbox. */
export async function runsSandboxed(hand: Hand): Promise<boolean> {
  const h = hand as Hand & { sandboxState?: () => Promise<SandboxState> };
  return typeof h.sandboxState === 'function' && (await h.sandboxState()).enabled;
}

/** The remote URL a sandboxed hand's clone gets, from the git route's capability-less path. */
export const relayRemote = (boundPath: string): string => `http://127.0.0.1:${SANDBOX_GIT_PORT}${boundPath}`;

/**
 * Replaces the URL a clone was made from (the proxy's, with the session's capability) in its
 * reflogs (`clone: from …`), so that nothing in the sandbox's reach holds the capability.
 */
export async function scrubReflogs(gitDir: string, from: string, to: string): Promise<void> {
  const walk = async (dir: string): Promise<void> => {
    for (const e of await fsp.readdir(dir, { withFileTypes: true }).catch(() => [])) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) await walk(p);
      else if (e.isFile()) {
        const text = await fsp.readFile(p, 'utf8');
        if (text.includes(from)) await fsp.writeFile(p, text.split(from).join(to));
      }
    }
  };
  await walk(path.join(gitDir, 'logs'));
}
