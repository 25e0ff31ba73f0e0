/**
 * The warm pool's repositories, packed once and unpacked on each pooled hand. Cloning a
 * repository of thousands of files for every hand made ahead (clone, tar, remove) was most of a
 * refill's CPU, and refills compete with the sessions the pool is there to serve. The tar of a
 * clone is kept here and unpacked again on the next pooled hand for as long as the repository's
 * refs (`git ls-remote`: every branch and tag, and HEAD) are what they were when it was cloned:
 * the hand then gets what a new clone would hold, in its own folder, its own copy (nothing on a
 * hand is shared with another). Only public repositories are made ahead (no credentials), so
 * nothing secret is kept.
 */
import type { Pieces } from './host-run';
import type { RemoteShell } from './remote/types';
import { cloneRepoOnto, lsRemote, packRepo, repoKey, repoTarget, unpackTar, type BackgroundRun, type RepoResource } from './resources';
import type { Hand } from './types';

/** Packs kept at most (the pools' current repositories; older ones go first). */
const MAX_PACKS = 8;
/** Bytes of packs kept at most: a larger repository is packed anew for each hand. */
const MAX_PACK_BYTES = 512 * 1024 * 1024;

interface Pack {
  refs: string;
  tar: Pieces;
}

/** Tars of clones by repository (URL and checkout), each with the refs it was cloned at. */
export class RepoPacks {
  private readonly packs = new Map<string, Pack>();
  /** Packings under way, by repository: two hands made at once wait for one clone. */
  private readonly packing = new Map<string, Promise<Pack>>();
  /** How many packs were made and how many times one was used again (the pool's log says). */
  readonly counts = { packed: 0, reused: 0 };

  /**
   * A tar of a clone of `repo` as it is now: the kept one when the repository's refs have not
   * changed since it was made, a new clone's otherwise. `reused` says which.
   */
  async get(repo: RepoResource, o: BackgroundRun = {}): Promise<{ tar: Pieces; reused: boolean }> {
    const key = JSON.stringify([repo.url, repo.checkout ?? null]);
    const refs = await lsRemote(repo, o);
    const kept = this.packs.get(key);
    if (kept && kept.refs === refs) {
      this.counts.reused += 1;
      // Most recently used last: the oldest goes first when there are too many.
      this.packs.delete(key);
      this.packs.set(key, kept);
      return { tar: kept.tar, reused: true };
    }
    const under = this.packing.get(key);
    if (under) {
      const p = await under;
      if (p.refs === refs) {
        this.counts.reused += 1;
        return { tar: p.tar, reused: true };
      }
    }
    const job = packRepo(repo, o).then((tar) => ({ refs, tar }));
    this.packing.set(key, job);
    try {
      const made = await job;
      this.counts.packed += 1;
      this.keep(key, made);
      return { tar: made.tar, reused: false };
    } finally {
      if (this.packing.get(key) === job) this.packing.delete(key);
    }
  }

  /**
   * Puts the repositories on a pooled hand, each unpacked from its pack; when that fails, as a
   * session's own hand would get it (cloned here, else by the hand). Throws when neither works.
   */
  async putOn(repos: readonly RepoResource[], target: { hand: Hand; shell: RemoteShell; workDir: string }, o: BackgroundRun): Promise<{ preApplied: Set<string>; reused: number }> {
    const preApplied = new Set<string>();
    let reused = 0;
    for (const repo of repos) {
      try {
        const pack = await this.get(repo, o);
        await unpackTar(pack.tar, repoTarget(repo.mount_path, repo.url), target.shell, target.workDir, o);
        reused += pack.reused ? 1 : 0;
      } catch {
        const out = await cloneRepoOnto(repo, target, o.signal);
        if (out.error !== undefined) throw new Error(`cloning ${repo.url}: ${out.error}`);
      }
      preApplied.add(repoKey(repo));
    }
    return { preApplied, reused };
  }

  /** Forgets every pack (the pool stopped). */
  clear(): void {
    this.packs.clear();
  }

  private keep(key: string, pack: Pack): void {
    this.packs.delete(key);
    if (pack.tar.bytes > MAX_PACK_BYTES) return;
    this.packs.set(key, pack);
    let bytes = [...this.packs.values()].reduce((n, p) => n + p.tar.bytes, 0);
    for (const [k, p] of this.packs) {
      if (this.packs.size <= MAX_PACKS && bytes <= MAX_PACK_BYTES) break;
      this.packs.delete(k);
      bytes -= p.tar.bytes;
    }
  }
}
