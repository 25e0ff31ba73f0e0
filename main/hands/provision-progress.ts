import type { SessionLog } from '../session/store';

/**
 * One step of provisioning a hand, as the user sees it: connecting (a container started, a host
 * dialled), cloning a repository (with git's own object and file counts), unpacking it onto the
 * hand. Written to the session's log as `hand.provisioning_progress` (a Corral event: the hosted
 * API provisions its containers out of sight and has no such event).
 */
export interface ProvisionProgress {
  phase: 'connecting' | 'cloning' | 'unpacking';
  /** The repository being cloned or unpacked (cloning, unpacking). */
  url?: string;
  resource_id?: string | null;
  /** git's stage, e.g. "Receiving objects", "Resolving deltas", "Updating files". */
  stage?: string;
  /** Objects received so far and in all (git's "Receiving objects"). */
  objects?: { done: number; total: number };
  /** Files written so far and in all (git's "Updating files" / "Checking out files"). */
  files?: { done: number; total: number };
  /** The stage's percentage, as git prints it. */
  percent?: number;
}

const GIT_PROGRESS = /^(?:remote: )?([A-Z][A-Za-z ]+?):\s+(\d+)% \((\d+)\/(\d+)\)/;

/** Reads git's `--progress` lines (split on \r and \n); returns the steps it names. */
export class GitProgressParser {
  private rest = '';

  /** Feeds a chunk of git's stderr; calls `on` for each progress line in it. */
  feed(chunk: string, on: (p: ProvisionProgress) => void): void {
    const lines = (this.rest + chunk).split(/[\r\n]/);
    this.rest = lines.pop() ?? '';
    for (const line of lines) {
      const m = GIT_PROGRESS.exec(line.trim());
      if (!m) continue;
      const [, stage, percent, done, total] = m;
      const counts = { done: Number(done), total: Number(total) };
      on({
        phase: 'cloning',
        stage,
        percent: Number(percent),
        ...(/objects/i.test(stage!) ? { objects: counts } : /files/i.test(stage!) ? { files: counts } : {}),
      });
    }
  }
}

/** Whether a line of git's stderr is a progress line (kept out of error messages). */
export const isGitProgressLine = (line: string): boolean => GIT_PROGRESS.test(line.trim());

/** How often one hand's progress is written to the log at most, within one stage (ms). */
const PROGRESS_EVERY_MS = 500;

/**
 * A sink that writes a hand's provisioning progress to its session's log, thinned out: every
 * change of phase or stage and every stage's end is written, steps within a stage at most every
 * PROGRESS_EVERY_MS (a clone prints hundreds of lines a second; the log keeps every event).
 */
export function progressToLog(log: SessionLog, sessionId: string, hand: string): (p: ProvisionProgress) => void {
  let lastKey = '';
  let lastAt = 0;
  return (p) => {
    const key = `${p.phase}\u0000${p.url ?? ''}\u0000${p.stage ?? ''}`;
    const now = Date.now();
    const ends = p.percent === 100;
    if (key === lastKey && !ends && now - lastAt < PROGRESS_EVERY_MS) return;
    lastKey = key;
    lastAt = now;
    try {
      if (log.findSession(sessionId)) log.emitEvent(sessionId, { type: 'hand.provisioning_progress', hand, ...p });
    } catch {
      // Progress is for the eye: a session removed meanwhile loses nothing that matters.
    }
  };
}
