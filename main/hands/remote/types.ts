import type { ToolDefinition } from '../tools/definitions';
import type { VaultSshKey } from '../hand-env';
/**
 * What a remote hand kind (SSH host, container, Android device) provides. The built-in tools
 * are implemented once on top of it (shell-hand.ts), so every kind answers them the same way.
 */

/** How a remote command ended. */
export interface ExecResult {
  /** The command's exit code; null when it was killed or the hand was lost. */
  exitCode: number | null;
  /** The signal that ended it, when known (e.g. 'TERM' after an abort). */
  signal?: string;
  /** Set when the hand died during the call: the reason, in words. */
  lost?: string;
}

/** Options of one remote command. */
export interface ExecOptions {
  /** Working folder on the remote side. */
  cwd?: string;
  /**
   * Aborting must stop the remote process group (not just the local stream) and resolve promptly
   * (well under 500 ms).
   */
  signal?: AbortSignal;
  /** Output as it arrives, in order; stdout and stderr kept apart where the kind can. */
  onOutput?: (chunk: Buffer, stream: 'stdout' | 'stderr') => void;
  /**
   * Bytes written to the command's stdin, which is then closed; without it, stdin is closed at
   * once. Given in pieces, they are written in order and never joined (a repository's pack is
   * kept as the pieces it was read in: joining 20 MB costs the host's loop a page fault per
   * 4 KiB of fresh memory).
   */
  stdin?: Buffer | readonly Buffer[];
}

/** A command's stdin (ExecOptions.stdin) as its pieces, in order; none when it has none. */
export function stdinPieces(stdin: Buffer | readonly Buffer[] | undefined): readonly Buffer[] {
  return stdin === undefined ? [] : Buffer.isBuffer(stdin) ? [stdin] : stdin;
}

/** Thrown by readFile/writeFile; `code` is what went wrong, `message` says it for a person. */
export class RemoteFileError extends Error {
  constructor(
    readonly code: 'ENOENT' | 'EISDIR' | 'EACCES' | 'TOOBIG' | 'LOST' | 'OTHER',
    message: string,
  ) {
    super(message);
  }
}

/** A live connection to one remote hand. */
export interface RemoteShell {
  /** Runs `sh -c command` on the hand. Never rejects for a failing command; rejects only for bugs. */
  exec(command: string, opts?: ExecOptions): Promise<ExecResult>;
  /** Reads a whole file (absolute remote path); TOOBIG when larger than maxBytes. */
  readFile(path: string, maxBytes: number): Promise<Buffer>;
  /** Writes a whole file (absolute remote path), creating parent folders. */
  writeFile(path: string, data: Buffer): Promise<void>;
  /** Called once when the hand is gone (connection lost, container died, device offline). */
  onLost(listener: (reason: string) => void): void;
  /** Set once the hand is gone: why. */
  readonly lostReason: string | undefined;
  /** The work folder the kind chose at connect (e.g. under the remote home), when it chose one. */
  readonly workDir?: string;
  /** Facts about this connection for the log's `hand.ready` (e.g. the SSH host key, first seen or known). */
  readonly facts?: Record<string, unknown>;
  /**
   * Makes a port on this machine's loopback reachable from the hand (SSH: remote forwarding over
   * the connection; a container on the host's network: loopback itself). Resolves with the
   * address the hand uses, or undefined when this kind or this hand cannot reach it. The route
   * lives as long as the connection.
   */
  reachHost?(port: number): Promise<{ host: string; port: number } | undefined>;
  /**
   * Starts the hand's persistent shell (shell-session.ts) on a stream kept open (see
   * remote/persistent-shell.ts); without it, each bash call is a command of its own.
   */
  startShell?: import('../shell-session').StartShell;
  /** Closes the connection (and whatever it started). */
  close(): Promise<void>;
}

/** A tool only some kinds have (e.g. a device's `screenshot`), run on the connected shell. */
export interface KindTool<S extends RemoteShell = RemoteShell> {
  definition: ToolDefinition;
  run(shell: S, input: Record<string, unknown>, opts: { signal?: AbortSignal }): Promise<import('../types').ToolOutcome>;
}

/** A kind of remote hand: turns an environment config into a connected shell. */
export interface RemoteHandKind<Config> {
  readonly kind: string;
  /** Connects (provisions: starts a container, opens an SSH connection, claims a device). */
  connect(config: Config, ctx: { signal?: AbortSignal; label: string; vaultKeys?: (host: string) => Promise<VaultSshKey[]> }): Promise<RemoteShell>;
  /** The work folder on the hand when the config names none. */
  defaultWorkDir(config: Config): string;
  /** One line for people and for the model's tool descriptions, e.g. `ssh corral@127.0.0.2:2222`. */
  describe(config: Config): string;
  /** Tools beyond the built-in six that this kind answers. */
  readonly extraTools?: readonly KindTool[];
}
