/**
 * The SSH hand's persistent shell: one exec channel kept open for the hand's life, its stdin
 * the shell's input. Ctrl-C and kill travel as `kill` commands over a second channel (sshd
 * refuses channel signals to non-root logins). The channel takes one of the connection's
 * session slots for as long as it lives.
 */
import type { ClientChannel } from 'ssh2';
import { REMOTE_SHELL_COMMAND, remoteStartShell } from '../remote/persistent-shell';
import type { StartShell } from '../shell-session';

/** What the persistent shell needs of an SSH connection. */
export interface SshShellDeps {
  /** Takes a channel slot; undefined when the connection is gone. */
  acquire(): Promise<(() => void) | undefined>;
  open(command: string, cb: (err: Error | undefined, stream: ClientChannel) => void): void;
  /** Runs a short command on a channel of its own, to its end. */
  runPlain(command: string): Promise<unknown>;
  /** Calls `fn` once if the connection is lost; returns a function that stops watching. */
  watchLost(fn: (reason: string) => void): () => void;
  lostReason(): string | undefined;
}

export function sshStartShell(d: SshShellDeps): StartShell {
  return remoteStartShell(
    (h) =>
      new Promise(async (resolve, reject) => {
        const lost = d.lostReason();
        if (lost) return reject(new Error(lost));
        const release = await d.acquire();
        if (!release) return reject(new Error(d.lostReason() ?? 'the connection is gone'));
        d.open(REMOTE_SHELL_COMMAND, (err, stream) => {
          if (err) {
            release();
            return reject(new Error(d.lostReason() ?? `cannot open an SSH channel: ${err.message}`));
          }
          let code: number | null | undefined;
          const unwatch = d.watchLost((reason) => {
            h.onExit(reason);
            stream.close();
          });
          stream.on('data', (c: Buffer) => h.onStdout(c));
          stream.stderr.on('data', (c: Buffer) => h.onStderr(c));
          stream.on('exit', (c: number | null) => (code = c));
          stream.on('close', () => {
            unwatch();
            release();
            h.onExit(d.lostReason() ?? (code === undefined || code === null ? 'its SSH channel closed' : `exit code ${code}`));
          });
          resolve({
            write: (data) => void stream.write(data),
            runBeside: async (command) => {
              await d.runPlain(command).catch(() => {});
            },
            close: () => stream.close(),
          });
        });
      }),
  );
}
