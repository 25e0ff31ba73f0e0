import { fork } from 'node:child_process';
import path from 'node:path';

/** Arrival and finish of one model request (epoch ms, sub-ms precision), and whose it was. */
export interface ModelTiming {
  session: string;
  arrived?: number;
  finished?: number;
}

/** Starts the bench's model server in its own process (see model-process.ts). */
export async function startModelProcess(turns: number) {
  // A young generation large enough that the server (not part of what is measured) rarely
  // scavenges: its pauses would land between a request's arrival and the host's next step.
  const execArgv = ['--import', 'tsx', '--min-semi-space-size=16', '--max-semi-space-size=64'];
  const child = fork(path.join(import.meta.dirname, 'model-process.ts'), [], { execArgv, env: { ...process.env, BENCH_TURNS: String(turns) } });
  const url = await new Promise<string>((resolve) => child.once('message', (m: { url: string }) => resolve(m.url)));
  return {
    url,
    /** The server's process (its CPU time is the bench's own, not the host's). */
    pid: child.pid,
    timings: () =>
      new Promise<ModelTiming[]>((resolve) => {
        child.once('message', (m: { timings: ModelTiming[] }) => resolve(m.timings));
        child.send({ t: 'timings' });
      }),
    stop: () => new Promise<void>((resolve) => (child.once('exit', () => resolve()), child.send({ t: 'stop' }))),
  };
}
