/**
 * One command through the Docker exec API: stdout and stderr kept apart (the engine's multiplexed
 * stream, split by dockerode's `demuxStream`), stdin written then closed (a hijacked stream,
 * half-closed), the exit code from exec inspect. Nothing here knows about aborts or lost hands.
 */
import type { Duplex } from 'node:stream';
import type Docker from 'dockerode';
import { stdinPieces } from '../remote/types';

export interface RawExecOptions {
  cwd?: string;
  /** Written to the command's stdin (pieces in order), which is then closed. Without it the command gets no stdin. */
  stdin?: Buffer | readonly Buffer[];
  onStdout(chunk: Buffer): void;
  onStderr(chunk: Buffer): void;
}

/** How a raw exec ended: the exit code, or an engine error (the command may not have run). */
export type RawOutcome = { exitCode: number | null; error?: undefined } | { exitCode: null; error: Error };

export interface RawExec {
  done: Promise<RawOutcome>;
  /** Stops listening: closes the stream (the command itself keeps running); `done` then settles soon. */
  detach(): void;
  /** If the command has not been started yet, it never will be (`done` then gives exit code null). */
  preventStart(): void;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Starts `cmd` (an argv, no shell) in the container. `done` never rejects. */
export function startExec(docker: Docker, container: Docker.Container, cmd: string[], opts: RawExecOptions): RawExec {
  let stream: Duplex | undefined;
  let detached = false;
  let noStart = false;

  async function run(): Promise<RawOutcome> {
    const exec = await container.exec({
      Cmd: cmd,
      AttachStdin: opts.stdin !== undefined,
      AttachStdout: true,
      AttachStderr: true,
      Tty: false,
      ...(opts.cwd ? { WorkingDir: opts.cwd } : {}),
    });
    if (detached || noStart) return { exitCode: null };
    const s = (await exec.start({ hijack: true, stdin: opts.stdin !== undefined })) as Duplex;
    stream = s;
    let streamError: Error | undefined;
    await new Promise<void>((resolve) => {
      s.once('end', resolve);
      s.once('close', resolve);
      s.on('error', (err) => {
        // Writing stdin to a command that has already exited fails with EPIPE: not an error of the call.
        if (!['EPIPE', 'ECONNRESET'].includes((err as NodeJS.ErrnoException).code ?? '')) streamError = err;
        resolve();
      });
      docker.modem.demuxStream(s, { write: (c: Buffer) => opts.onStdout(c) } as never, { write: (c: Buffer) => opts.onStderr(c) } as never);
      if (detached) s.destroy();
      else if (opts.stdin !== undefined) {
        for (const piece of stdinPieces(opts.stdin)) if (piece.length > 0) s.write(piece);
        s.end();
      }
    });
    if (detached) return { exitCode: null };
    // The stream can close a moment before the engine records the exit.
    for (let i = 0; i < 40; i++) {
      const info = await exec.inspect();
      if (!info.Running) return { exitCode: typeof info.ExitCode === 'number' ? info.ExitCode : null };
      await sleep(25);
    }
    if (streamError) throw streamError;
    return { exitCode: null };
  }

  const done = run().then(
    (r) => r,
    (err: unknown) => ({ exitCode: null, error: err instanceof Error ? err : new Error(String(err)) }) as const,
  );
  return {
    done,
    detach() {
      detached = true;
      stream?.destroy();
    },
    preventStart() {
      noStart = true;
    },
  };
}
