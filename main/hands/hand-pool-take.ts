import type { SessionLog } from '../session/store';
import type { HandPool, PooledHand } from './hand-pool';
import { MAIN_HAND } from './membership';
import { sessionRepos, type RepoRouter } from './resources';

/**
 * A pooled hand for one of a session's hands, if the pool has a fitting one; the taking is
 * written to the session's log (`hand.taken_from_pool`). Only a session's main hand gets the
 * session's repositories; a session whose vault routes a repository through the git proxy gets
 * only a hand without repositories made ahead (its clone must go through the proxy, as itself).
 */
export async function takePooledHand(
  pool: HandPool | undefined,
  ctx: { log: SessionLog; git?: RepoRouter; sessionId: string; hand: string; environmentId: string | undefined; config: { type: string } & Record<string, unknown> },
): Promise<PooledHand | undefined> {
  if (!pool?.enabled || !ctx.environmentId) return undefined;
  const repos = ctx.hand === MAIN_HAND ? sessionRepos(ctx.log, ctx.sessionId) : [];
  const routes = ctx.git && repos.length ? await Promise.all(repos.map((r) => ctx.git!.route(ctx.sessionId, r.url).catch(() => 'unknown'))) : [];
  const routed = routes.some(Boolean);
  // Another hand than the main one, or routed: a hand with nothing made ahead, and nothing learnt.
  const got = await pool.take(ctx.environmentId, ctx.config, routed || ctx.hand !== MAIN_HAND ? null : repos, ctx.sessionId);
  if (!got) return undefined;
  ctx.log.emitEvent(ctx.sessionId, {
    type: 'hand.taken_from_pool',
    hand: ctx.hand,
    kind: ctx.config.type,
    environment_id: ctx.environmentId,
    pool_hand_id: got.id,
    provisioned_ms: got.provisionedMs,
    waited_ms: got.waitedMs,
    repositories_ready: got.preApplied.size,
  });
  return got;
}
