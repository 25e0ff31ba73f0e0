/**
 * The window's live view of machines that dial in (issue #15): the work items of `self_hosted`
 * environments, each with its lease and last heartbeat, pushed as they change. Spread into the
 * one contract (contract.ts).
 */
import { z } from 'zod';

const id = z.string().min(1).max(100);

export const workerSchemas = {
  /**
   * Work items (one environment's or one session's, else all), newest first, then each one again
   * whenever it changes; without a session, also the workers seen polling (the last minute's,
   * then each again at most every 5 s while it polls).
   */
  watchWorkers: z.object({ environmentId: id.optional(), sessionId: id.optional() }).strict(),
};

/** One work item as the window shows it: who holds it, its lease and its last heartbeat. */
export interface UiWorkItem {
  type: 'work_item';
  id: string;
  environment_id: string;
  /** The environment's name, when it still exists. */
  environment_name: string | null;
  /** The session it serves (null: a health check). */
  session_id: string | null;
  /** The session's hand it serves (its lane in the timeline). */
  hand: string | null;
  kind: 'session' | 'healthcheck';
  state: 'queued' | 'starting' | 'active' | 'stopping' | 'stopped';
  /** The worker that claimed it (`Anthropic-Worker-ID`), when it said. */
  worker_id: string | null;
  created_at: string;
  acknowledged_at: string | null;
  latest_heartbeat_at: string | null;
  lease_ttl_s: number | null;
  /** When the lease runs out unless a heartbeat extends it (null: no lease held). */
  lease_expires_at: string | null;
  stop_reason: string | null;
  stopped_at: string | null;
}

/** A worker (named by its `Anthropic-Worker-ID`) seen polling an environment: a machine ready for work. */
export interface UiWorkerSeen {
  type: 'worker';
  environment_id: string;
  environment_name: string | null;
  worker_id: string;
  last_poll_at: string;
}

/** Item type of the stream above. */
export interface WorkerStreamItems {
  watchWorkers: UiWorkItem | UiWorkerSeen;
}
