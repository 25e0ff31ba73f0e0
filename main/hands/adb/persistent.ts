/**
 * The device hand's persistent shell: one shell-protocol (v2) stream kept open for the hand's
 * life, its stdin packets the shell's input. The protocol carries no signals, so Ctrl-C and kill
 * are short `kill` commands on a stream beside it.
 */
import type { AdbShellProtocolProcess } from '@yume-chan/adb';
import type { ReadableStream } from '@yume-chan/stream-extra';
import { REMOTE_SHELL_COMMAND, remoteStartShell } from '../remote/persistent-shell';
import type { StartShell } from '../shell-session';
import type { AdbShell } from './shell';

export function adbStartShell(device: AdbShell): StartShell {
  return remoteStartShell(async (h) => {
    if (device.lostReason) throw new Error(device.lostReason);
    const protocol = device.adb.subprocess.shellProtocol;
    if (!protocol?.isSupported) throw new Error(`device ${device.serial} does not speak shell protocol v2`);
    const proc: AdbShellProtocolProcess = await protocol.spawn([REMOTE_SHELL_COMMAND]);
    let ended = false;
    const end = (reason: string) => {
      if (ended) return;
      ended = true;
      h.onExit(reason);
    };
    const pump = async (from: ReadableStream<Uint8Array>, to: (c: Buffer) => void) => {
      const reader = from.getReader();
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return;
        if (value.length) to(Buffer.from(value));
      }
    };
    const drained = Promise.all([pump(proc.stdout, h.onStdout), pump(proc.stderr, h.onStderr)]).catch(() => {});
    proc.exited.then(
      async (code) => {
        await drained;
        end(device.lostReason ?? `exit code ${code}`);
      },
      () => end(device.lostReason ?? 'its adb stream ended'),
    );
    device.onLost((reason) => end(reason));
    const writer = proc.stdin.getWriter();
    return {
      write: (data) => {
        if (!ended) writer.write(new TextEncoder().encode(data)).catch(() => {});
      },
      runBeside: async (command) => {
        if (!device.lostReason) await device.exec(command).catch(() => {});
      },
      close: () => void Promise.resolve(proc.kill()).catch(() => {}),
    };
  });
}
