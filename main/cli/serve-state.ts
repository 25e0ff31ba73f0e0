/**
 * DATA/serve.json: where a running `serve` answers (its URL and pid, no secret), so that
 * `serve link` and `serve rotate-key` find it. Written at start (0600), removed at stop; a stale
 * file (serve was killed) is noticed when its pid is gone or the URL does not answer.
 */
import fs from 'node:fs';
import path from 'node:path';

export const SERVE_STATE_FILE = 'serve.json';

export interface ServeState {
  url: string;
  pid: number;
}

export function writeServeState(dataDir: string, state: ServeState): void {
  fs.writeFileSync(path.join(dataDir, SERVE_STATE_FILE), `${JSON.stringify(state)}\n`, { mode: 0o600 });
}

export function removeServeState(dataDir: string): void {
  fs.rmSync(path.join(dataDir, SERVE_STATE_FILE), { force: true });
}

/** The running serve of this data folder, when its process is alive. */
export function readServeState(dataDir: string): ServeState | undefined {
  let state: ServeState;
  try {
    state = JSON.parse(fs.readFileSync(path.join(dataDir, SERVE_STATE_FILE), 'utf8')) as ServeState;
  } catch {
    return undefined;
  }
  try {
    process.kill(state.pid, 0);
    return state;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM' ? state : undefined;
  }
}
