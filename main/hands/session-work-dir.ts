import posix from 'node:path/posix';
import { shq } from './remote/shell-hand';
import type { RemoteShell } from './remote/types';
import { MAIN_HAND } from './membership';

/**
 * Kinds whose default work folder is shared by every session that connects: one SSH host (the
 * same user's `~/corral-work`) and one device (`/data/local/tmp/corral`) serve many sessions at
 * once, so without a folder of its own a second session's repository could land in — or be
 * "kept" from — the first one's. A container is per session already.
 */
const PER_SESSION_KINDS = new Set(['ssh', 'adb']);

/**
 * A remote hand's work folder when its environment names no `working_dir` (one that does is
 * used as it is, shared on purpose: the caller decides that): for kinds in
 * {@link PER_SESSION_KINDS}, the session's own folder under the kind's default `base`
 * (`~/corral-work/<session id>`, plus the hand's name for any hand but the main one), made if
 * missing; for other kinds `base` itself. The same session gets the same folder at every
 * provisioning, so its clones are kept (resources-kept.ts).
 */
export async function sessionWorkDir(
  shell: Pick<RemoteShell, 'exec'>,
  type: string,
  base: string,
  sessionId: string,
  handName: string,
  signal?: AbortSignal,
): Promise<string> {
  if (!PER_SESSION_KINDS.has(type)) return base;
  const dir = handName === MAIN_HAND ? posix.join(base, sessionId) : posix.join(base, sessionId, handName);
  const made = await shell.exec(`mkdir -p -- ${shq(dir)} && test -w ${shq(dir)}`, { signal });
  if (made.exitCode !== 0) throw new Error(`cannot make the session's work folder ${dir}: ${made.lost ?? `exit code ${made.exitCode}`}`);
  return dir;
}

/**
 * The folder on a remote hand that is a session's own, removed when the session is deleted: its
 * per-session folder on a shared kind (`<base>/<session id>`, every hand of it included), or the
 * folder a pooled SSH hand was made in (hand-pool.ts); none where `working_dir` names the folder
 * (the environment's owner chose it) or the whole machine is the session's (a container).
 */
export function ownFolder(type: string, o: { pooled: boolean; workDir: string; base: string; sessionId: string; configured: boolean }): string | undefined {
  if (o.configured || !PER_SESSION_KINDS.has(type)) return undefined;
  return o.pooled ? (type === 'ssh' ? o.workDir : undefined) : posix.join(o.base, o.sessionId);
}
