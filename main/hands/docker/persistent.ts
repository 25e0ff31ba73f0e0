/**
 * The container hand's persistent shell: one exec kept attached for the hand's life (stdin
 * open, the engine's multiplexed output split by dockerode). The Docker API cannot signal an
 * exec: Ctrl-C goes through the container's init (it signals the group the shell noted), and a
 * kill, or a Ctrl-C where the shell could not note its group, is a short `kill` exec beside it.
 */
import type { Duplex } from 'node:stream';
import type Docker from 'dockerode';
import { remoteShellArgvNoting, remoteStartShell } from '../remote/persistent-shell';
import type { StartShell } from '../shell-session';
import { startExec } from './exec';
import type { Lifeline } from './lifeline';
import { SHELL_PGID_FILE } from './provision';

const SHELL_ARGV = remoteShellArgvNoting(SHELL_PGID_FILE);

export function dockerStartShell(docker: Docker, container: Docker.Container, life: Lifeline): StartShell {
  return remoteStartShell(async (h) => {
    if (life.lostReason !== undefined) throw new Error(life.lostReason);
    const exec = await container.exec({ Cmd: [...SHELL_ARGV], AttachStdin: true, AttachStdout: true, AttachStderr: true, Tty: false });
    const s = (await exec.start({ hijack: true, stdin: true })) as Duplex;
    let ended = false;
    const end = (reason: string) => {
      if (ended) return;
      ended = true;
      h.onExit(reason);
    };
    s.on('error', () => {});
    // The stream can end a moment before the container's `die` arrives: give it that moment,
    // so a dead container is reported as the hand lost, not as a shell that ended.
    const ended_ = () => void life.lostWithin(500).then(() => end(life.lostReason ?? 'its exec ended'));
    s.once('end', ended_);
    s.once('close', ended_);
    life.onLost((reason) => {
      end(reason);
      s.destroy();
    });
    docker.modem.demuxStream(s, { write: (c: Buffer) => h.onStdout(c) } as never, { write: (c: Buffer) => h.onStderr(c) } as never);
    return {
      write: (data) => {
        if (!ended) s.write(data);
      },
      runBeside: async (command) => {
        if (life.lostReason !== undefined) return;
        await startExec(docker, container, ['sh', '-c', command], { onStdout: () => {}, onStderr: () => {} }).done;
      },
      // The container's init sends the Ctrl-C (provision.ts): one API call, no exec to start.
      signalNoted: async () => {
        if (life.lostReason !== undefined) return true; // nothing to interrupt any more
        return container.kill({ signal: 'SIGUSR1', abortSignal: AbortSignal.timeout(10_000) }).then(
          () => true,
          () => false,
        );
      },
      close: () => s.destroy(),
    };
  });
}
