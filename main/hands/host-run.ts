/**
 * The programs the hands run on this machine (git and tar for provisioning, `ssh -G`, `rm -rf`),
 * started by the launcher (launcher/run-program.ts): a process start from the host would hold its
 * event loop. Each gets an allowlisted environment, never the host's own.
 */
import fs from 'node:fs';
import { StringDecoder } from 'node:string_decoder';
import { commandEnv, hostGitEnv } from '../child-env';
import { runProgram } from '../launcher/run-program';
import { isGitProgressLine } from './provision-progress';

/** Past this a run is ended: a clone or a pack that has not finished is not coming. */
const HOST_RUN_TIMEOUT_MS = 10 * 60_000;

/** How to run one, and what to say when it fails. */
export interface HostRunOptions {
  /** Names it in errors ("git clone failed (exit code 128): …"). */
  what: string;
  /** Its whole environment (default: the allowlisted `commandEnv()`; git and tar get `gitRunEnv()`). */
  env?: Record<string, string>;
  signal?: AbortSignal;
  /** Stdout past this ends the run with `tooBig` as its error. */
  maxBytes?: number;
  tooBig?: string;
  /** Each piece of stderr as it comes (git's --progress lines); they are kept out of errors. */
  stderr?: (chunk: string) => void;
  niceness?: number;
  /** Past this it is ended (default 10 minutes: a clone or a pack that has not finished is not coming). */
  timeoutMs?: number;
}

/**
 * What git and tar get: the allowlisted environment with git's own (proxies, the agent socket).
 * No terminal prompts: a repository that needs a password fails now instead of hanging.
 * COPYFILE_DISABLE: macOS's tar would add AppleDouble `._*` files for extended attributes.
 */
export function gitRunEnv(): Record<string, string> {
  return { ...hostGitEnv(), GIT_TERMINAL_PROMPT: '0', GIT_ASKPASS: '', COPYFILE_DISABLE: '1' };
}

/** A run that ended with a failing exit code or a signal: what it wrote to stderr, apart. */
export class HostRunFailed extends Error {
  constructor(
    message: string,
    /** Its stderr (the end of it, progress lines left out), trimmed. */
    readonly stderr: string,
  ) {
    super(message);
  }
}

/** Runs `cmd args` here; resolves with its stdout, rejects with its stderr in the message (HostRunFailed). */
export async function runHere(cmd: string, args: string[], opts: HostRunOptions): Promise<Buffer> {
  const out = await runHerePieces(cmd, args, opts);
  return await joinInSlices(out.pieces, out.bytes);
}

/** Output kept as the pieces it was read in, never joined (tens of MB of fresh memory cost the loop its page faults). */
export interface Pieces {
  pieces: readonly Buffer[];
  /** Bytes of all the pieces. */
  bytes: number;
}

/** Like runHere, its stdout as the pieces it was read in. */
export async function runHerePieces(cmd: string, args: string[], opts: HostRunOptions): Promise<Pieces> {
  const out: Buffer[] = [];
  let size = 0;
  let err = '';
  let tooBig = false;
  const decoder = new StringDecoder('utf8');
  const program = runProgram(cmd, args, {
    env: opts.env ?? commandEnv(),
    signal: opts.signal,
    timeoutMs: opts.timeoutMs ?? HOST_RUN_TIMEOUT_MS,
    // Work done ahead of need gives way to sessions' (raising niceness needs no privilege).
    niceness: opts.niceness,
    onStdout: (c) => {
      size += c.length;
      if (opts.maxBytes !== undefined && size > opts.maxBytes) {
        tooBig = true;
        program.kill('SIGKILL');
      } else if (!tooBig) out.push(c);
    },
    onStderr: (c) => {
      const text = decoder.write(c);
      opts.stderr?.(text);
      // Progress lines say nothing about a failure: kept out of its message.
      err = (err + (opts.stderr ? text.split(/(?<=[\r\n])/).filter((l) => !isGitProgressLine(l)).join('') : text)).slice(-4000);
    },
  });
  const end = await program.done.catch((e: NodeJS.ErrnoException) => {
    if (e.code === 'ENOENT') throw Object.assign(new Error(`${cmd} is not installed on this machine`), { code: 'ENOENT' });
    throw new Error(`${opts.what}: ${e.message}`);
  });
  if (end.aborted) throw new Error(`${opts.what} was stopped`);
  if (tooBig) throw new Error(opts.tooBig ?? `${opts.what} wrote more than ${opts.maxBytes} bytes`);
  if (end.timedOut) throw new Error(`${opts.what} took longer than ${fmtDuration(opts.timeoutMs ?? HOST_RUN_TIMEOUT_MS)} and was stopped`);
  if (end.code === 0) return { pieces: out, bytes: size };
  throw new HostRunFailed(`${opts.what} failed (${end.code !== null ? `exit code ${end.code}` : end.signal}): ${err.trim()}`, err.trim());
}

const fmtDuration = (ms: number) => (ms >= 60_000 ? `${ms / 60_000} minutes` : `${ms / 1000} s`);

/** How many bytes are copied per macrotask when a large output is joined into one buffer. */
const JOIN_SLICE_BYTES = 1024 * 1024;

/**
 * `Buffer.concat`, a slice at a time: tens of MB copied in one go held the host's loop 40-70 ms
 * here (fresh memory's page faults, bench:ttft's profile), every session waiting. A repository's
 * pack is not joined at all (runHerePieces).
 */
export async function joinInSlices(chunks: readonly Buffer[], total: number): Promise<Buffer> {
  if (total <= JOIN_SLICE_BYTES) return Buffer.concat(chunks, total);
  const joined = Buffer.allocUnsafeSlow(total);
  let at = 0;
  let since = 0;
  for (const chunk of chunks) {
    chunk.copy(joined, at);
    at += chunk.length;
    since += chunk.length;
    if (since >= JOIN_SLICE_BYTES) {
      since = 0;
      await new Promise((r) => setImmediate(r));
    }
  }
  return joined;
}

/**
 * Removes a folder here (a temporary clone: thousands of files) by `rm -rf` through the launcher,
 * so the host's loop does not take a callback per file; Node's own removal where there is no rm.
 */
export async function removeTree(dir: string): Promise<void> {
  if (process.platform !== 'win32') {
    const removed = await runHere('rm', ['-rf', '--', dir], { what: 'removing a temporary folder' }).then(
      () => true,
      () => false,
    );
    if (removed) return;
  }
  await fs.promises.rm(dir, { recursive: true, force: true });
}
