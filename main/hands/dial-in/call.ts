import type { ToolOutcome } from '../types';
import type { DialIn } from './service';

/**
 * The idempotency key under which a call's result is appended: the brain supervisor records a
 * hand's result as `brain:` + `res:<tool_use_id>` (brain/tool-result-event.ts, supervisor.ts), and a
 * worker's `user.tool_result` is appended under the same key, so whichever comes first is the
 * answer and the other gets that one back. (Spelled out here: hands may not import the brain.)
 */
export const workerResultKey = (toolUseId: string) => `brain:res:${toolUseId}`;

/** How long a call waits for some worker to claim its session's work before it fails. */
const DEFAULT_CLAIM_TIMEOUT_MS = 10 * 60_000;

/** Options of one call sent to a worker. */
export interface WorkerCallOptions {
  sessionId: string;
  environmentId: string;
  /** The session's name for this hand (for the timeline's lane). */
  hand?: string;
  toolUseId: string | undefined;
  signal?: AbortSignal;
  /** How long to wait for a worker to claim the work (default `CORRAL_WORK_CLAIM_TIMEOUT_MS` or 10 min). */
  claimTimeoutMs?: number;
  /** Upper bound of the whole call, as for any hand; on expiry the worker is told to stop it. */
  timeoutMs?: number;
}

const fail = (content: string, details: Record<string, unknown>): ToolOutcome => ({ content, isError: true, details: { hand_kind: 'self_hosted', ...details } });

/**
 * A tool call on a `self_hosted` hand. The call is already in the log (`agent.tool_use`): a
 * worker attached to the session sees it, runs it and posts `user.tool_result`. This queues a
 * work item when the session has none open, then waits for that result, for the lease to run
 * out (the worker died: an honest error, and the next call queues a fresh item), or for an
 * interrupt (the item is told to stop, which makes the worker abort what it runs).
 *
 * A result the worker posted is appended by the API under `workerResultKey`; the outcome
 * returned then is only a placeholder the supervisor's append never uses (it gets the worker's).
 */
export function callThroughWorker(dialIn: DialIn, o: WorkerCallOptions): Promise<ToolOutcome> {
  const { sessionId, environmentId, toolUseId } = o;
  const log = dialIn.log;
  if (!toolUseId) return Promise.resolve(fail('Not run: a call on a self-hosted worker needs its tool_use id.', {}));
  const answered = (): ToolOutcome => ({ content: '(answered by the self-hosted worker)', isError: false });
  if (log.hasIdempotencyKey(sessionId, workerResultKey(toolUseId))) return Promise.resolve(answered());
  dialIn.expireLeases();
  let queuedAt = Date.now();
  /**
   * The session's open item, else a fresh one, except while an item told to stop is still held
   * by its worker: a second runner could then run this call while the first is still attached,
   * so the call waits for that one to end (its worker sees no new calls meanwhile).
   */
  const acquire = () => {
    const open = dialIn.work.openFor(sessionId, environmentId);
    if (open) return open;
    if (dialIn.work.windingDown(sessionId, environmentId, Date.now())) return undefined;
    queuedAt = Date.now();
    return dialIn.enqueue(environmentId, sessionId, 'session', o.hand ?? 'main');
  };
  let item = acquire();
  let requeued = 0;
  const claimTimeout = o.claimTimeoutMs ?? (Number(process.env.CORRAL_WORK_CLAIM_TIMEOUT_MS) || DEFAULT_CLAIM_TIMEOUT_MS);
  return new Promise((resolve) => {
    let settled = false;
    const finish = (outcome: ToolOutcome) => {
      if (settled) return;
      settled = true;
      unsubscribe();
      clearInterval(timer);
      clearTimeout(deadline);
      o.signal?.removeEventListener('abort', onAbort);
      resolve(outcome);
    };
    // Synchronous after each commit, and subscribed on the tick the log was last checked: no result is missed.
    const unsubscribe = log.subscribe(sessionId, (e) => {
      if (e.type === 'user.tool_result' && e.tool_use_id === toolUseId) finish(answered());
    });
    const deadline = o.timeoutMs !== undefined ? setTimeout(() => {
      if (item) dialIn.work.stop(item.id, false, 'timed_out', Date.now());
      finish(fail(`Timed out after ${Math.round(o.timeoutMs! / 1000)} s: the self-hosted worker was told to stop this call. It may have run in part; check before repeating it.`, { timed_out: true, work_id: item?.id ?? null }));
    }, o.timeoutMs) : undefined;
    const onAbort = () => {
      // The worker learns it at its next heartbeat (state 'stopping') and aborts the tools it runs.
      if (item) dialIn.work.stop(item.id, false, 'interrupted', Date.now());
      finish(fail('Interrupted: the self-hosted worker was told to stop this call. It may have run in part; check before repeating it.', { interrupted: true, work_id: item?.id ?? null }));
    };
    const check = () => {
      dialIn.expireLeases();
      if (log.hasIdempotencyKey(sessionId, workerResultKey(toolUseId))) return finish(answered());
      if (!item && !(item = acquire())) return; // an earlier item is still winding down
      const now = dialIn.work.get(item.id);
      if (now && now.state === 'stopped' && now.stop_reason === 'stopped_by_worker' && requeued < 3) {
        // Its worker finished with the session (an idle runner stops) before this call reached it:
        // it never ran it, so the call goes to a fresh claim.
        requeued += 1;
        item = acquire();
        return;
      }
      if (!now || now.state === 'stopped' || now.state === 'stopping') {
        const lost = now?.stop_reason === 'lease_expired';
        const text = lost
          ? `The self-hosted worker running this call stopped heartbeating: the lease of work item ${item.id} (${now?.lease_ttl_s ?? dialIn.leaseTtlS} s) ran out. The call may or may not have run (files written, commands started); check before repeating it. The next call goes to a fresh claim by a worker.`
          : `The self-hosted worker's work item ${item.id} was stopped (${now?.stop_reason ?? 'by its worker'}) before this call was answered. It may or may not have run; check before repeating it.`;
        return finish(fail(text, { work_id: item.id, ...(lost ? { lease_expired: true } : {}) }));
      }
      if (now.state === 'queued' && Date.now() - queuedAt > claimTimeout) {
        dialIn.work.stop(item.id, true, 'unclaimed', Date.now());
        finish(
          fail(
            `Not run: no self-hosted worker claimed this session's work (item ${item.id}) within ${claimTimeout >= 1000 ? `${Math.round(claimTimeout / 1000)} s` : `${claimTimeout} ms`}. Start one on the machine that should run it (npx corral-worker --url URL --environment ${environmentId} with the environment's key).`,
            { work_id: item.id, unclaimed: true },
          ),
        );
      }
    };
    // A lease is checked a few times per its length (a dead worker's call fails soon after it runs out).
    const timer = setInterval(check, Math.max(100, Math.min(1000, (dialIn.leaseTtlS * 1000) / 4)));
    o.signal?.addEventListener('abort', onAbort, { once: true });
    if (o.signal?.aborted) onAbort();
  });
}
