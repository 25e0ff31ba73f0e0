import { Hono, type Context } from 'hono';
import { z } from 'zod';
import type { WorkRow } from '../../../catalog/work';
import type { Host } from '../../../host';
import { DEFAULT_RECLAIM_MS, MAX_TTL_S, MIN_TTL_S } from '../../../hands/dial-in/service';
import { ApiError, notFound } from '../errors';
import { jsonBody, queryInt } from '../request';
import { principalOf } from '../work-auth';

const MAX_WORKER_ID = 256;

/** The API's work item (`BetaSelfHostedWork`), plus Corral's `stop_reason` and `lease_expires_at`. */
export function workToApi(w: WorkRow, secret: string | null = null): Record<string, unknown> {
  return {
    type: 'work',
    id: w.id,
    environment_id: w.environment_id,
    state: w.state,
    data: w.data_type === 'session' ? { type: 'session', id: w.session_id } : { type: 'healthcheck', id: w.id },
    metadata: w.metadata,
    secret,
    created_at: w.created_at,
    acknowledged_at: w.acknowledged_at,
    started_at: w.started_at,
    latest_heartbeat_at: w.latest_heartbeat_at,
    stop_requested_at: w.stop_requested_at,
    stopped_at: w.stopped_at,
    stop_reason: w.stop_reason,
    lease_expires_at: w.lease_expires_ms !== null ? new Date(w.lease_expires_ms).toISOString() : null,
  };
}

const keyBody = z.object({ name: z.string().min(1).max(256).nullish() }).strict();
const stopBody = z.object({ force: z.boolean().nullish() }).strict();
const updateBody = z.object({ metadata: z.record(z.string().min(1).max(64), z.string().max(512).nullable()) }).strict();
const emptyBody = z.object({}).strict();

/**
 * `/v1/environments/{id}/keys` (Corral's: environment keys, shown once) and
 * `/v1/environments/{id}/work/…`: the self-hosted worker protocol as the SDK's `work` client and
 * its `EnvironmentWorker` call it (poll, ack, heartbeat, stop, stats, list, retrieve, update),
 * plus `POST …/work/healthcheck` (Corral's: queue a health-check item a worker claims and stops).
 */
export function workRoutes(host: Host): Hono {
  const app = new Hono();
  const dialIn = host.dialIn;
  const selfHosted = (id: string) => {
    const env = host.environments.get(id);
    if (!env) throw notFound('environment', id);
    const type = (env.record.config as { type?: string } | undefined)?.type;
    if (type !== 'self_hosted') throw new ApiError('invalid_request_error', `environment '${id}' is '${type}': keys and work items exist only for self_hosted environments`);
    return env;
  };
  const item = (c: Context) => {
    const envId = c.req.param('env')!;
    const w = dialIn.work.get(c.req.param('work')!);
    if (!w || w.environment_id !== envId) throw notFound('work item', c.req.param('work')!);
    return w;
  };
  const ownerOnly = (c: Context, what: string) => {
    if (principalOf(c).kind !== 'api') throw new ApiError('permission_error', `${what} needs the API key (worker credentials cannot)`);
  };
  // The hosted API: list "accepts the environment key as a bearer token. It rejects a Claude API
  // key"; poll, ack and heartbeat are the worker's calls (its environment key, or an item's
  // sessions token for heartbeat), which the SDK documents as made by the worker alone.
  const workerOnly = (c: Context, what: string) => {
    if (principalOf(c).kind === 'api') throw new ApiError('permission_error', `${what} takes the environment key (or, for a heartbeat, the work item's secret) as a bearer token; it rejects the API key`);
  };

  app.post('/:env/keys', async (c) => {
    ownerOnly(c, 'making an environment key');
    const env = selfHosted(c.req.param('env'));
    if (env.archived_at) throw new ApiError('invalid_request_error', `environment '${env.id}' is archived`);
    const body = await jsonBody(c, keyBody);
    const k = await dialIn.createKey(env.id, body.name ?? null).catch((err: Error) => {
      throw new ApiError('api_error', `the key was not made: the vault could not store it (${err.message})`);
    });
    return c.json({ type: 'environment_key', ...k });
  });
  app.get('/:env/keys', (c) => {
    ownerOnly(c, 'listing environment keys');
    const env = selfHosted(c.req.param('env'));
    return c.json({ data: dialIn.keys(env.id).map((k) => ({ type: 'environment_key', ...k })), next_page: null });
  });
  app.post('/:env/keys/:key/revoke', (c) => {
    ownerOnly(c, 'revoking an environment key');
    const env = selfHosted(c.req.param('env'));
    const k = dialIn.work.key(c.req.param('key'));
    if (!k || k.environment_id !== env.id) throw notFound('environment key', c.req.param('key'));
    return c.json({ type: 'environment_key', ...dialIn.revokeKey(k.id) });
  });

  app.get('/:env/work/poll', async (c) => {
    workerOnly(c, 'polling for work');
    const env = selfHosted(c.req.param('env'));
    const blockMs = queryInt(c, 'block_ms', { min: 1, max: 999 }) ?? 0;
    const reclaimMs = queryInt(c, 'reclaim_older_than_ms', { min: 0, max: 24 * 3600_000 }) ?? DEFAULT_RECLAIM_MS;
    const p = principalOf(c);
    const workerId = c.req.header('anthropic-worker-id') ?? null;
    // Kept per worker (the hands panel, stats): an id is a name, not a place for kilobytes.
    if (workerId !== null && workerId.length > MAX_WORKER_ID) throw new ApiError('invalid_request_error', `anthropic-worker-id: at most ${MAX_WORKER_ID} characters`);
    const got = await dialIn.poll(env.id, { blockMs, reclaimMs, workerId, signal: c.req.raw.signal, keyId: p.kind === 'environment_key' ? p.keyId : undefined });
    return c.json(got ? workToApi(got.row, got.secret) : null);
  });
  app.get('/:env/work/stats', (c) => {
    ownerOnly(c, 'work queue stats');
    const env = selfHosted(c.req.param('env'));
    const s = dialIn.stats(env.id);
    return c.json({ type: 'work_queue_stats', depth: s.depth, pending: s.pending, oldest_queued_at: s.oldest, workers_polling: s.workers });
  });
  app.get('/:env/work', (c) => {
    workerOnly(c, 'listing work items');
    const env = selfHosted(c.req.param('env'));
    const limit = queryInt(c, 'limit', { min: 1, max: 1000, fallback: 20 })!;
    const page = dialIn.work.list(env.id, limit, c.req.query('page') || undefined);
    return c.json({ data: page.data.map((w) => workToApi(w)), next_page: page.next_page });
  });
  app.post('/:env/work/healthcheck', (c) => {
    ownerOnly(c, 'queueing a health check');
    const env = selfHosted(c.req.param('env'));
    return c.json(workToApi(dialIn.enqueue(env.id, null, 'healthcheck')));
  });

  app.get('/:env/work/:work', (c) => {
    ownerOnly(c, 'retrieving a work item');
    dialIn.expireLeases();
    return c.json(workToApi(item(c)));
  });
  app.post('/:env/work/:work', async (c) => {
    ownerOnly(c, 'updating a work item');
    item(c); // an unknown item is a 404 before its body is read
    const { metadata } = await jsonBody(c, updateBody);
    // Read after the body: a patch whose body came first has been applied (a copy read before
    // the await would write it back over it).
    const w = item(c);
    const next: Record<string, string> = { ...w.metadata };
    for (const [k, v] of Object.entries(metadata)) {
      if (v === null) delete next[k];
      else next[k] = v;
    }
    if (Object.keys(next).length > 16) throw new ApiError('invalid_request_error', 'metadata: at most 16 keys');
    return c.json(workToApi(dialIn.work.setMetadata(w.id, next)!));
  });
  app.post('/:env/work/:work/ack', async (c) => {
    workerOnly(c, 'acknowledging a work item');
    await jsonBody(c, emptyBody);
    const w = item(c);
    if (!dialIn.ack(w)) throw new ApiError('conflict_error', `work item '${w.id}' is '${w.state}'${w.polled_at_ms === null ? ' and was never polled' : ''}: only a polled, queued item can be acknowledged`);
    return c.json(workToApi(dialIn.work.get(w.id)!));
  });
  app.post('/:env/work/:work/heartbeat', async (c) => {
    workerOnly(c, 'heartbeating a work item');
    await jsonBody(c, emptyBody);
    dialIn.expireLeases();
    const w = item(c);
    const desired = queryInt(c, 'desired_ttl_seconds', { min: MIN_TTL_S, max: MAX_TTL_S });
    const expectedRaw = c.req.query('expected_last_heartbeat');
    const ttl = dialIn.ttlFor(desired);
    const lease = (row: WorkRow, extended: boolean) => ({ last_heartbeat: row.latest_heartbeat_at ?? '', lease_extended: extended, state: row.state, ttl_seconds: row.lease_ttl_s ?? ttl });
    // The API compares nothing once an item is stopping or stopped: the worker learns it must shut down.
    if (w.state === 'stopping' || w.state === 'stopped') return c.json({ type: 'work_heartbeat', ...lease(w, false) });
    if (w.state === 'queued') throw new ApiError('conflict_error', `work item '${w.id}' has not been acknowledged; ack it before heartbeating`);
    const expected = expectedRaw === undefined ? undefined : expectedRaw === 'NO_HEARTBEAT' ? null : expectedRaw;
    const after = dialIn.work.heartbeat(w.id, expected, Date.now(), ttl);
    if (!after) {
      const current = dialIn.work.get(w.id)!;
      const details = { error_code: 'heartbeat_precondition_failed', current_state: { last_heartbeat: current.latest_heartbeat_at, lease_extended: false, state: current.state, ttl_seconds: current.lease_ttl_s ?? ttl } };
      return c.json(
        { type: 'error', error: { type: 'invalid_request_error', message: `expected_last_heartbeat '${expectedRaw}' does not match the stored heartbeat; another worker may hold the lease`, details } },
        412,
        { 'x-should-retry': 'false' },
      );
    }
    return c.json({ type: 'work_heartbeat', ...lease(after, true) });
  });
  app.post('/:env/work/:work/stop', async (c) => {
    const body = await jsonBody(c, stopBody);
    const w = item(c);
    const owner = principalOf(c).kind === 'api';
    // A worker that stops an item is done with it (the SDK's poller stops each item after its
    // body ran): it is stopped at once. The owner's graceful stop asks the worker to shut down.
    if (!dialIn.work.stop(w.id, body.force === true || !owner, owner ? 'stopped_by_api' : 'stopped_by_worker', Date.now())) {
      throw new ApiError('conflict_error', `work item '${w.id}' is already ${w.state}`);
    }
    return c.json(workToApi(dialIn.work.get(w.id)!));
  });
  return app;
}
