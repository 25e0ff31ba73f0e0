import crypto from 'node:crypto';
import type { AgentRecord } from '../../../catalog/agents';
import type { SessionRow } from '../../../session/types';
import { checkMcp, normalizeModel, normalizeTools, sessionAgentSnapshot } from './agent';
import type { ResourceParam } from '../schemas/sessions';
import { mountPathProblem } from '../schemas/mount-path';
import type { z } from 'zod';
import type { sessionCreateBody } from '../schemas/sessions';

/** The API's session object, plus Corral's own fields (`last_event_seq`, `forked_from`). */
export function sessionToApi(row: SessionRow): Record<string, unknown> {
  const r = row.record;
  return {
    type: 'session',
    id: row.id,
    agent: r.agent ?? null,
    archived_at: row.archived_at,
    budget: r.budget ?? null,
    created_at: row.created_at,
    environment_id: row.environment_id,
    metadata: r.metadata ?? {},
    outcome_evaluations: [],
    resources: r.resources ?? [],
    stats: { duration_seconds: Math.max(0, (Date.now() - Date.parse(row.created_at)) / 1000) },
    status: row.status,
    title: r.title ?? null,
    updated_at: row.updated_at,
    usage: row.usage,
    vault_ids: r.vault_ids ?? [],
    last_event_seq: row.last_seq,
    forked_from: row.parent_id ? { session_id: row.parent_id, seq: row.fork_seq } : null,
  };
}

type AgentRef = z.infer<typeof sessionCreateBody>['agent'];

/** The agent snapshot a new session runs with: the pinned version plus any overrides. */
export function resolveSessionAgent(ref: AgentRef, agent: AgentRecord): Record<string, unknown> {
  const snapshot = sessionAgentSnapshot(agent);
  if (typeof ref === 'string' || ref.type === 'agent') return snapshot;
  return checkMcp({
    ...snapshot,
    ...(ref.model !== undefined ? { model: normalizeModel(ref.model) } : {}),
    ...(ref.system !== undefined ? { system: ref.system } : {}),
    ...(ref.tools !== undefined ? { tools: normalizeTools(ref.tools) } : {}),
    ...(ref.mcp_servers !== undefined ? { mcp_servers: ref.mcp_servers } : {}),
    ...(ref.skills !== undefined ? { skills: ref.skills.map((s) => ({ ...s, version: s.version ?? 'latest' })) } : {}),
  });
}

/** Stored resource objects (ids, timestamps, default mount paths). Tokens are never stored. */
export function normalizeResources(resources: readonly ResourceParam[]): Record<string, unknown>[] {
  const now = new Date().toISOString();
  return resources.map((res) => {
    const id = `sesrsc_${crypto.randomBytes(12).toString('hex')}`;
    if (res.type === 'github_repository') {
      return { id, type: res.type, url: res.url, checkout: res.checkout ?? null, mount_path: res.mount_path ?? defaultMountPath(res.url), created_at: now, updated_at: now };
    }
    if (res.type === 'file') {
      return { id, type: res.type, file_id: res.file_id, mount_path: res.mount_path ?? `/mnt/session/uploads/${res.file_id}`, created_at: now, updated_at: now };
    }
    return { ...res };
  });
}

/**
 * A repository's default mount path, `/workspace/<name>` from its URL's last segment. It passes
 * the same check as a given mount_path: a URL ending in `/.git` or `/...git` named `/workspace/`
 * itself or `/workspace/..` (the parent of the session's work folder, shared by every session),
 * so such names fall back to `/workspace/repo`.
 */
export function defaultMountPath(url: string): string {
  const name = new URL(url).pathname.split('/').filter(Boolean).pop()?.replace(/\.git$/, '') ?? '';
  const path = `/workspace/${name}`;
  return mountPathProblem(path) ? '/workspace/repo' : path;
}
