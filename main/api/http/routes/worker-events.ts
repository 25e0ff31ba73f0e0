import { Hono } from 'hono';
import { z } from 'zod';
import type { Host } from '../../../host';
import { workerResultKey } from '../../../hands/dial-in/call';
import { ApiError } from '../errors';
import { eventParams, eventSendBody } from '../schemas/events';
import { jsonBody } from '../request';
import { principalOf } from '../work-auth';
import { filterWorkerStream, workerMaySee } from '../worker-view';

type ToolResultParams = Extract<z.infer<typeof eventParams>, { type: 'user.tool_result' }>;

/**
 * The session side of the worker protocol, in front of the ordinary event routes:
 * - `POST /v1/sessions/{id}/events` with `user.tool_result`: accepted only for a session whose
 *   environment is `self_hosted` (400 otherwise, as the API says), only for a tool call of that
 *   session with no result yet, and from a work secret only while its item holds a live lease.
 *   It is appended under the call's result key, so the first answer (the worker's, or the host's
 *   honest error once the lease ran out) is the only one.
 * - `GET /v1/sessions/{id}/events` and `…/events/stream` for a work secret: only calls meant for
 *   a self_hosted hand, and in lists none that already have a result (`worker-view.ts`).
 * Everything else falls through to the event routes.
 */
export function workerEventRoutes(host: Host): Hono {
  const app = new Hono();
  const { log } = host;

  app.get('/:id/events', async (c, next) => {
    const p = principalOf(c);
    await next();
    if (p.kind !== 'work_secret' || c.res.status !== 200) return;
    const id = c.req.param('id');
    const body = (await c.res.json()) as { data: { type: string; id: string }[]; next_page: string | null };
    body.data = body.data.filter((e) => workerMaySee(host, id, e, { answeredToo: false, workId: p.workId }));
    c.res = new Response(JSON.stringify(body), { status: 200, headers: { 'content-type': 'application/json' } });
  });

  app.get('/:id/events/stream', async (c, next) => {
    const p = principalOf(c);
    await next();
    if (p.kind !== 'work_secret' || c.res.status !== 200 || !c.res.body) return;
    const id = c.req.param('id');
    // Live calls have no result yet: only whom they are for decides.
    const body = filterWorkerStream(c.res.body, (e) => workerMaySee(host, id, e, { answeredToo: true, workId: p.workId }));
    c.res = new Response(body, { status: 200, headers: c.res.headers });
  });

  app.post('/:id/events', async (c, next) => {
    const p = principalOf(c);
    const raw = await c.req.text().catch(() => '');
    // A cheap look first: most posts carry no tool result and go straight on.
    if (p.kind === 'api' && !raw.includes('user.tool_result')) return next();
    const body = await jsonBody(c, eventSendBody);
    const results = body.events.filter((e): e is ToolResultParams => e.type === 'user.tool_result');
    if (results.length === 0) {
      if (p.kind !== 'api') throw new ApiError('permission_error', 'a work secret can only post user.tool_result events');
      return next();
    }
    if (results.length !== body.events.length) throw new ApiError('invalid_request_error', 'send user.tool_result events in a request of their own');
    const id = c.req.param('id');
    const session = log.getSession(id);
    const envId = session.environment_id;
    if (!envId || !host.dialIn.isSelfHosted(envId)) {
      throw new ApiError('invalid_request_error', `events.0: user.tool_result is only accepted for sessions whose environment is self_hosted; session '${id}' runs its tools on its own hands`);
    }
    if (p.kind === 'work_secret') {
      host.dialIn.expireLeases();
      const w = host.dialIn.work.get(p.workId);
      if (!w || (w.state !== 'starting' && w.state !== 'active')) {
        throw new ApiError('invalid_request_error', `work item '${p.workId}' no longer holds a lease (${w?.state ?? 'gone'}${w?.stop_reason ? `: ${w.stop_reason}` : ''}); its calls were answered by the host`);
      }
    }
    // Every result is checked before any is appended (on one tick: the log is synchronous), so a
    // refused request writes nothing; a refusal after the first append left that result in the
    // log, acted on, under a 400.
    const seen = new Set<string>();
    for (const [i, e] of results.entries()) {
      if (seen.has(e.tool_use_id)) throw new ApiError('invalid_request_error', `events.${i}.tool_use_id: tool call '${e.tool_use_id}' is answered twice in this request`);
      seen.add(e.tool_use_id);
      const use = log.findEvent(id, e.tool_use_id);
      if (!use || use.type !== 'agent.tool_use') throw new ApiError('invalid_request_error', `events.${i}.tool_use_id: '${e.tool_use_id}' is not a tool call of session '${id}'`);
      if (!workerMaySee(host, id, use, { answeredToo: true })) throw new ApiError('invalid_request_error', `events.${i}.tool_use_id: tool call '${e.tool_use_id}' is for a hand of session '${id}' that is not self_hosted`);
      if (use.evaluated_permission === 'ask') {
        const confirmed = log.getEvents(id, { after: use.seq, types: ['user.tool_confirmation'], limit: 10_000 }).some((x) => x.tool_use_id === use.id && x.result === 'allow');
        if (!confirmed) throw new ApiError('invalid_request_error', `events.${i}.tool_use_id: tool call '${e.tool_use_id}' waits for the user's confirmation; it may not run yet`);
      }
      if (log.hasIdempotencyKey(id, workerResultKey(e.tool_use_id))) throw new ApiError('invalid_request_error', `events.${i}.tool_use_id: tool call '${e.tool_use_id}' is already answered`);
    }
    const out = [];
    for (const e of results) {
      // Redacted like any hand's output: a command on the worker could print a vault value (its own environment key, read from /proc).
      out.push(...log.emitEvents(id, [host.vault.redactEvent({ ...e })], workerResultKey(e.tool_use_id)));
    }
    return c.json({ data: out });
  });
  return app;
}
