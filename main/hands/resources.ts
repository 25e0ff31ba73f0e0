import path from 'node:path/posix';
import type { SessionLog } from '../session/store';
import { shq } from './remote/shell-hand';
import type { Hand } from './types';

interface RepoResource {
  id?: string;
  type: 'github_repository';
  url: string;
  checkout?: { type: 'branch'; name: string } | { type: 'commit'; sha: string } | null;
  mount_path?: string;
}

/** Where a repository goes on a hand: its mount path, with `/workspace/` meaning the work folder. */
export function repoTarget(mountPath: string | undefined, url: string): string {
  const name = url.split('/').filter(Boolean).pop()?.replace(/\.git$/, '') || 'repo';
  const p = mountPath ?? `/workspace/${name}`;
  return p.startsWith('/workspace/') ? p.slice('/workspace/'.length) : p;
}

/**
 * Applies a session's resources to a freshly provisioned hand: each repository is cloned (at
 * its branch or commit) with the hand's own bash, so it works the same on every kind. Each
 * outcome is logged; a failure does not stop the hand from being used.
 */
export async function applyResources(log: SessionLog, sessionId: string, handName: string, hand: Hand, signal?: AbortSignal): Promise<void> {
  const resources = (log.getSession(sessionId).record.resources ?? []) as { type: string }[];
  for (const r of resources) {
    if (r.type !== 'github_repository') continue;
    const repo = r as RepoResource;
    const target = repoTarget(repo.mount_path, repo.url);
    const checkout = repo.checkout?.type === 'branch' ? ` --branch ${shq(repo.checkout.name)}` : '';
    const commit = repo.checkout?.type === 'commit' ? ` && git -C ${shq(target)} checkout --quiet ${shq(repo.checkout.sha)}` : '';
    const started = Date.now();
    const out = await hand.execute(
      'bash',
      { command: `mkdir -p ${shq(path.dirname(target))} && git clone --quiet${checkout} ${shq(repo.url)} ${shq(target)}${commit}`, timeout_ms: 10 * 60_000 },
      { signal },
    );
    const ok = !out.isError && out.details?.exit_code === 0;
    log.emitEvent(sessionId, {
      type: ok ? 'hand.resource_applied' : 'hand.resource_failed',
      hand: handName,
      resource_id: repo.id ?? null,
      url: repo.url,
      path: target,
      duration_ms: Date.now() - started,
      ...(ok ? {} : { error: out.content.slice(-2000) }),
    });
  }
}
