/**
 * A stdio MCP server's command, run in the same sandbox as the local hand's commands
 * (hands/local/sandbox.ts): the file system read-only but for a private folder of its own,
 * the host's data folder, the sessions' work folders and the usual secret stores unreadable,
 * its own PID namespace, and no network. Where the sandbox cannot run here (or is turned off
 * for the host) the command runs without it, and the host log says so.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sandboxAvailability, wrap } from '../hands/local/sandbox';

/** How the host runs stdio servers. */
export interface StdioSandboxOptions {
  /** False: run without the sandbox, on purpose (the host's sandbox setting). */
  enabled: boolean;
  /** Folders the server may not read (the data folder, the work root). */
  denyRead: string[];
}

/** A stdio server's process, ready to spawn; `release` when it has ended. */
export interface StdioLaunch {
  command: string;
  args: string[];
  cwd: string;
  /** Whether it runs in the sandbox (false: why not). */
  sandboxed: true | string;
  release(): void;
}

const shq = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

export async function launchStdio(argv: readonly string[], opts: StdioSandboxOptions): Promise<StdioLaunch> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'corral-mcp-'));
  const cleanup = () => fs.rmSync(dir, { recursive: true, force: true });
  const plain = (why: string): StdioLaunch => ({ command: argv[0]!, args: argv.slice(1), cwd: dir, sandboxed: why, release: cleanup });
  if (!opts.enabled) return plain('the sandbox is turned off for this host');
  const available = await sandboxAvailability();
  if (!available.ok) {
    console.warn(`corral: the MCP server ${argv[0]} runs WITHOUT a sandbox: ${available.reason}`);
    return plain(available.reason);
  }
  try {
    const wrapped = await wrap(`exec ${argv.map(shq).join(' ')}`, { workDir: dir, tmpDir: dir, policy: { denyRead: opts.denyRead, allowedHosts: [] } });
    return {
      command: wrapped.file,
      args: wrapped.args,
      cwd: dir,
      sandboxed: true,
      release: () => {
        wrapped.release();
        cleanup();
      },
    };
  } catch (err) {
    cleanup();
    throw err;
  }
}
