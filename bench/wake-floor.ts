/**
 * What one cross-process wake-up costs on this machine: a message to a forked Node process that
 * answers at once, sent from idle (a pause between sends, as the brain and the host wait on
 * each other), p50/p99 of the round trip. A tool round trip crosses a process boundary about
 * six times (model → host → brain → host, host → brain → host → model), so this is the floor
 * under bench:brain's overhead that no code in the host or the brain can go below; printing it
 * beside the overhead compares machines (a VM where a wake-up is slow makes every leg slow).
 */
import { spawn } from 'node:child_process';
import { percentile } from './stats';

const ECHO = `process.on('message', (m) => process.send(m));`;

/** A Node process that echoes each IPC message: `roundTrip()` times one (ms). */
export function echoChild(): { roundTrip(): Promise<number>; close(): void } {
  const child = spawn(process.execPath, ['-e', ECHO], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], serialization: 'json' });
  let id = 0;
  return {
    roundTrip: () => {
      const t = performance.now();
      return new Promise<number>((resolve) => {
        child.once('message', () => resolve(performance.now() - t));
        child.send({ t: 'req', id: ++id, args: { pad: 'x'.repeat(200) } });
      });
    },
    close: () => void child.kill(),
  };
}

/** Round trips (ms) of `count` small IPC messages to an echoing child, `gapMs` apart. */
export async function wakeRoundTrips(count = 300, gapMs = 2): Promise<{ p50: number; p99: number }> {
  const echo = echoChild();
  const times: number[] = [];
  try {
    for (let i = 0; i < count; i++) {
      await new Promise((r) => setTimeout(r, gapMs));
      const ms = await echo.roundTrip();
      if (i >= 20) times.push(ms); // the child's first replies run cold code
    }
  } finally {
    echo.close();
  }
  return { p50: percentile(times, 50), p99: percentile(times, 99) };
}
