import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import posix from 'node:path/posix';
import type { SessionLog } from '../session/store';
import { shq } from './remote/shell-hand';
import type { RemoteShell } from './remote/types';
import type { Hand } from './types';
import { gitRunEnv, removeTree, runHere, runHerePieces, type Pieces } from './host-run';
import { GitProgressParser, type ProvisionProgress } from './provision-progress';
import { keepExistingClone } from './resources-kept';
import { relayRemote, runsSandboxed, scrubReflogs } from './local/sandbox-git';

/** A session's repository resource (the API's github_repository). */
export interface RepoResource {
  id?: string;
  type: 'github_repository';
  url: string;
  checkout?: { type: 'branch'; name: string } | { type: 'commit'; sha: string } | null;
  mount_path?: string;
}

/** Where resources go: the hand, its connection when it is remote, and its work folder. */
export interface ResourceTarget {
  hand: Hand;
  /** Set for remote hands: the tree cloned here is unpacked there through it. */
  shell?: RemoteShell;
  workDir: string;
  /** The host's git proxy (repositories with a token in the session's vaults go through it). */
  git?: RepoRouter;
  /** Resource ids already applied to this hand (each is applied once, also when added later). */
  applied?: Set<string>;
  /** Where progress goes (connecting, cloning with git's counts, unpacking). */
  onProgress?: (p: ProvisionProgress) => void;
  /** Repositories already on the hand (a pooled hand made ahead, hand-pool.ts), by repoKey. */
  preApplied?: ReadonlySet<string>;
  /** Called when a clone's remote on the hand is the git proxy (it then carries the session's capability). */
  onProxyRemote?: () => void;
}

/** The session's repository resources. */
export function sessionRepos(log: SessionLog, sessionId: string): RepoResource[] {
  const resources = (log.getSession(sessionId).record.resources ?? []) as { type: string }[];
  return resources.filter((r): r is RepoResource => r.type === 'github_repository');
}

/** What makes two repository resources put the same tree in the same place. */
export function repoKey(r: RepoResource): string {
  return JSON.stringify([r.url, r.checkout ?? null, repoTarget(r.mount_path, r.url)]);
}

/** Routes a session's repository through the host's authenticating git proxy (main/vault/git-proxy.ts). */
export interface RepoRouter {
  /** The route when the session's vaults hold a token for the repository; undefined otherwise. */
  route(sessionId: string, url: string): Promise<{ port: number; path: string; url: string; boundPath?: string } | undefined>;
}

/** A repository larger than this (as a tar, history included) is not shipped to a hand. */
export const MAX_SHIPPED_REPO_BYTES = 1024 * 1024 * 1024;
const CLONE_TIMEOUT_MS = 10 * 60_000;
const TOO_BIG = `the repository is larger than ${MAX_SHIPPED_REPO_BYTES / 1024 ** 2} MB packed; too large to copy to the hand`;

/** Where a repository goes on a hand: its mount path, with `/workspace/` meaning the work folder. */
export function repoTarget(mountPath: string | undefined, url: string): string {
  const last = url.split('/').filter(Boolean).pop()?.replace(/\.git$/, '');
  // Never the work folder itself or its parent (a URL ending in `/.git` or `/...git`).
  const name = last && last !== '.' && last !== '..' ? last : 'repo';
  const p = mountPath ?? `/workspace/${name}`;
  return p.startsWith('/workspace/') ? p.slice('/workspace/'.length) : p;
}

/**
 * Applies a session's resources to a freshly provisioned hand. Each repository is cloned on this
 * machine (which has the network and, later, the credentials; a container without network or a
 * phone without git needs neither) and unpacked on a remote hand from a tar; should that fail
 * (no route from here, no tar there), the hand clones it itself. Each outcome is logged; a
 * failure does not stop the hand from being used.
 */
export async function applyResources(log: SessionLog, sessionId: string, handName: string, target: ResourceTarget, signal?: AbortSignal, onlyId?: string): Promise<void> {
  for (const repo of sessionRepos(log, sessionId)) {
    if (onlyId !== undefined && repo.id !== onlyId) continue;
    if (repo.id !== undefined) {
      if (target.applied?.has(repo.id)) continue;
      target.applied?.add(repo.id);
    }
    const dest = repoTarget(repo.mount_path, repo.url);
    const started = Date.now();
    let outcome: RepoOutcome;
    let remote: string | undefined;
    // A pooled hand was made with this repository already on it (never one with a vault route).
    const pre = target.preApplied?.has(repoKey(repo)) === true;
    if (pre) outcome = { via: 'this machine' };
    else {
      // With a token in the vault: cloned here through the proxy, the token never on disk.
      let route;
      try {
        route = await target.git?.route(sessionId, repo.url);
        // A clone an earlier provisioning of this hand left is kept (main's resources-kept.ts).
        const kept = await keepExistingClone(dest, target, route, signal, repo.url);
        if (kept.kept) {
          remote = kept.remote ? 'git proxy' : undefined;
          outcome = { via: kept.note ? `an earlier provisioning (kept; ${kept.note})` : 'an earlier provisioning (kept as it was)' };
        } else if (route) remote = await pointRemoteAtProxy(repo, { ...repo, url: route.url }, dest, target, route, signal);
      } catch (err) {
        outcome = await afterFailure(repo, dest, target, err, signal);
      }
      outcome ??= route ? { via: 'this machine' } : await cloneRepoOnto(repo, target, signal);
    }
    if (remote) target.onProxyRemote?.();
    log.emitEvent(sessionId, {
      type: outcome.error === undefined ? 'hand.resource_applied' : 'hand.resource_failed',
      hand: handName,
      resource_id: repo.id ?? null,
      url: repo.url,
      path: dest,
      duration_ms: Date.now() - started,
      ...(outcome.error === undefined ? { cloned_on: outcome.via } : { error: outcome.error.slice(-2000) }),
      ...(remote ? { git_remote: remote } : {}),
      ...(pre ? { pre_applied: true } : {}),
    });
  }
}

/** How putting one repository on a hand went. */
export type RepoOutcome = { via: string; error?: undefined } | { error: string; via?: undefined };

/**
 * Puts one repository (no credentials: its own URL) on a hand: cloned here and copied over, else
 * (no route from here, no tar there) cloned by the hand itself. Never throws.
 */
export async function cloneRepoOnto(repo: RepoResource, target: ResourceTarget, signal?: AbortSignal): Promise<RepoOutcome> {
  const dest = repoTarget(repo.mount_path, repo.url);
  try {
    return target.shell
      ? await shipClone(repo, dest, target.shell, target.workDir, signal, target.onProgress)
      : await cloneLocally(repo, path.resolve(target.workDir, dest), signal, target.onProgress);
  } catch (err) {
    return afterFailure(repo, dest, target, err, signal);
  }
}

/** After cloning here failed: a remote hand tries with its own git. */
async function afterFailure(repo: RepoResource, dest: string, target: ResourceTarget, err: unknown, signal?: AbortSignal): Promise<RepoOutcome> {
  const hereFailed = err instanceof Error ? err.message : String(err);
  if (signal?.aborted || !target.shell) return { error: hereFailed };
  target.onProgress?.({ phase: 'cloning', url: repo.url, resource_id: repo.id ?? null, stage: 'cloning on the hand' });
  const onHand = await cloneOnHand(repo, dest, target.hand, signal);
  return onHand.ok ? { via: 'the hand' } : { error: `cloning on this machine failed: ${hereFailed}\ncloning on the hand failed too: ${onHand.error}` };
}

/**
 * Clones through the proxy and points the clone's `origin` at the proxy as the hand reaches it
 * (local: loopback; SSH: a forwarded port; a container on the host's network: loopback). When
 * the hand cannot reach the proxy, `origin` is the repository's own URL (no token: pushing and
 * pulling from the hand then fail, but the checkout is there). Says which.
 */
async function pointRemoteAtProxy(
  repo: RepoResource,
  from: RepoResource,
  dest: string,
  target: ResourceTarget,
  route: { port: number; path: string; url: string; boundPath?: string },
  signal?: AbortSignal,
): Promise<string> {
  if (!target.shell) {
    const dir = path.resolve(target.workDir, dest);
    await cloneLocally(from, dir, signal, target.onProgress, repo);
    // A sandboxed hand reaches the proxy only through its relay, bound to the session (no capability).
    if (route.boundPath && (await runsSandboxed(target.hand))) {
      await runHere('git', ['-C', dir, 'remote', 'set-url', 'origin', relayRemote(route.boundPath)], { signal, what: 'git remote set-url', env: gitRunEnv() });
      await scrubReflogs(path.join(dir, '.git'), route.url, relayRemote(route.boundPath));
    }
    await runHere('git', ['-C', dir, 'config', 'remote.origin.proxy', ''], { signal, what: 'git config', env: gitRunEnv() });
    return 'git proxy';
  }
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'corral-clone-'));
  try {
    // Why it cannot, when the hand says (an adb device without reverse forwarding, say).
    let why = '';
    const reach = await target.shell.reachHost?.(route.port).catch((e: unknown) => void (why = `: ${e instanceof Error ? e.message : String(e)}`));
    const url = reach ? `http://${reach.host}:${reach.port}${route.path}` : repo.url;
    await clone(from, path.join(tmp, 'repo'), signal, target.onProgress, repo);
    // Set here, before packing: the hand may have no git of its own to set it with.
    await runHere('git', ['-C', path.join(tmp, 'repo'), 'remote', 'set-url', 'origin', url], { signal, what: 'git remote set-url', env: gitRunEnv() });
    // The git proxy is reached directly, never through the egress proxy a hand's HTTP_PROXY names.
    if (reach) await runHere('git', ['-C', path.join(tmp, 'repo'), 'config', 'remote.origin.proxy', ''], { signal, what: 'git config', env: gitRunEnv() });
    target.onProgress?.({ phase: 'unpacking', url: repo.url, resource_id: repo.id ?? null });
    const tar = await runHerePieces('tar', ['-C', path.join(tmp, 'repo'), '-cf', '-', '.'], { signal, maxBytes: MAX_SHIPPED_REPO_BYTES, tooBig: TOO_BIG, what: 'packing the clone', env: gitRunEnv() });
    await unpackTar(tar, dest, target.shell, target.workDir, { signal });
    return reach ? 'git proxy' : `direct (the hand cannot reach the git proxy${why})`;
  } finally {
    await removeTree(tmp);
  }
}

/** Clones straight into the folder (a local hand's work folder is on this machine). */
async function cloneLocally(repo: RepoResource, dir: string, signal?: AbortSignal, onProgress?: Progress, shown = repo): Promise<{ via: 'this machine' }> {
  if (fs.existsSync(dir) && fs.readdirSync(dir).length > 0) throw new Error(`${dir} already exists and is not empty`);
  fs.mkdirSync(path.dirname(dir), { recursive: true });
  await clone(repo, dir, signal, onProgress, shown);
  return { via: 'this machine' };
}

/** Clones into a temporary folder here, then unpacks it on the remote hand. */
async function shipClone(repo: RepoResource, dest: string, shell: RemoteShell, workDir: string, signal?: AbortSignal, onProgress?: Progress): Promise<{ via: 'this machine' }> {
  const tar = await packRepo(repo, { signal, onProgress });
  onProgress?.({ phase: 'unpacking', url: repo.url, resource_id: repo.id ?? null });
  await unpackTar(tar, dest, shell, workDir, { signal });
  return { via: 'this machine' };
}

/** How work done ahead of need (the warm pool's) runs: `niceness` for the processes it starts here and there. */
export interface BackgroundRun {
  signal?: AbortSignal;
  /** Lowered priority (0–19) for the clone and tar run here, and the unpacking on the hand when it has `nice`. */
  niceness?: number;
  onProgress?: Progress;
}

/** A repository (no credentials: its own URL) cloned here into a temporary folder, as a tar of that folder. */
export async function packRepo(repo: RepoResource, o: BackgroundRun = {}): Promise<Pieces> {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'corral-clone-'));
  try {
    await clone(repo, path.join(tmp, 'repo'), o.signal, o.onProgress, repo, o.niceness);
    return await runHerePieces('tar', ['-C', path.join(tmp, 'repo'), '-cf', '-', '.'], { signal: o.signal, maxBytes: MAX_SHIPPED_REPO_BYTES, tooBig: TOO_BIG, what: 'packing the clone', niceness: o.niceness, env: gitRunEnv() });
  } finally {
    // Not rmSync: a clone may hold tens of thousands of files, seconds of the host's loop.
    await removeTree(tmp);
  }
}

/** A repository's refs as `git ls-remote` lists them (HEAD included): what a clone of it would hold. */
export async function lsRemote(repo: RepoResource, o: BackgroundRun = {}): Promise<string> {
  return (await runHere('git', ['ls-remote', '--', repo.url], { signal: o.signal, what: 'git ls-remote', niceness: o.niceness, env: gitRunEnv() })).toString('utf8');
}

/** Unpacks a tar (packRepo's) at `dest` on the remote hand. */
export async function unpackTar(tar: Pieces, dest: string, shell: RemoteShell, workDir: string, o: BackgroundRun = {}): Promise<void> {
  const stderr: string[] = [];
  const untar = `tar -xf - -C ${shq(dest)}`;
  // Lowered where the hand has `nice` (a minimal image may not: then at its normal priority).
  const cmd = o.niceness ? `if command -v nice >/dev/null 2>&1; then nice -n ${o.niceness} ${untar}; else ${untar}; fi` : untar;
  const res = await shell.exec(`mkdir -p ${shq(dest)} && ${cmd}`, {
    cwd: workDir,
    stdin: tar.pieces,
    signal: o.signal,
    onOutput: (chunk, stream) => void (stream === 'stderr' && stderr.push(chunk.toString('utf8'))),
  });
  if (res.exitCode !== 0) {
    const why = res.lost ?? (res.exitCode === null ? `stopped${res.signal ? ` by SIG${res.signal}` : ''}` : `exit code ${res.exitCode}`);
    throw new Error(`unpacking on the hand failed (${why}): ${stderr.join('').trim().slice(-1000)}`);
  }
}

/** The hand's own git, for when this machine could not clone (e.g. a host only the hand reaches). */
async function cloneOnHand(repo: RepoResource, dest: string, hand: Hand, signal?: AbortSignal): Promise<{ ok: true } | { ok: false; error: string }> {
  const branch = repo.checkout?.type === 'branch' ? ` --branch ${shq(repo.checkout.name)}` : '';
  const commit = repo.checkout?.type === 'commit' ? ` && git -C ${shq(dest)} checkout --quiet ${shq(repo.checkout.sha)}` : '';
  const out = await hand.execute(
    'bash',
    { command: `mkdir -p ${shq(posix.dirname(dest))} && git clone --quiet${branch} ${shq(repo.url)} ${shq(dest)}${commit}`, timeout_ms: CLONE_TIMEOUT_MS },
    { signal },
  );
  return !out.isError && out.details?.exit_code === 0 ? { ok: true } : { ok: false, error: out.content.slice(-1000) };
}

type Progress = (p: ProvisionProgress) => void;

/** @param shown the repository as the user named it (`repo` may be its route through the git proxy) */
async function clone(repo: RepoResource, dir: string, signal?: AbortSignal, onProgress?: Progress, shown = repo, niceness?: number): Promise<void> {
  const branch = repo.checkout?.type === 'branch' ? ['--branch', repo.checkout.name] : [];
  // The files go to the hand byte for byte as committed: no CRLF conversion (Git for Windows
  // turns it on by default). `--` keeps a URL that starts with '-' from being read as an option.
  // With someone to tell, git's counts (objects, files) are read from its --progress lines.
  const said = { url: shown.url, resource_id: shown.id ?? null };
  onProgress?.({ phase: 'cloning', ...said });
  const parser = onProgress ? new GitProgressParser() : undefined;
  const stderr = parser && ((chunk: string) => parser.feed(chunk, (p) => onProgress!({ ...p, ...said })));
  await runHere('git', ['-c', 'core.autocrlf=false', 'clone', onProgress ? '--progress' : '--quiet', ...branch, '--', repo.url, dir], { signal, what: 'git clone', stderr, niceness, env: gitRunEnv() });
  if (repo.checkout?.type === 'commit') await runHere('git', ['-C', dir, 'checkout', '--quiet', repo.checkout.sha, '--'], { signal, what: 'git checkout', niceness, env: gitRunEnv() });
}
