import type { Context } from 'hono';
import type { Host } from '../../host';
import type { WorkPrincipal } from '../../hands/dial-in/service';
import { ApiError } from './errors';

/** Who is calling: the server's API key (the owner), or a credential of the worker protocol. */
export type Principal = { kind: 'api' } | WorkPrincipal;

const KEY = 'principal' as never;

export function setPrincipal(c: Context, p: Principal): void {
  c.set(KEY, p as never);
}

/** The caller of this request (the /v1 middleware set it). */
export function principalOf(c: Context): Principal {
  return (c.get(KEY) as Principal | undefined) ?? { kind: 'api' };
}

const WORK_ITEM_CALL = /^\/v1\/environments\/([^/]+)\/work\/([^/]+)\/(ack|heartbeat|stop)$/;
const POLL = /^\/v1\/environments\/([^/]+)\/work\/poll$/;
const LIST = /^\/v1\/environments\/([^/]+)\/work$/;
const SESSION_CALL = /^\/v1\/sessions\/([^/]+)(\/events(\/stream)?)?$/;

/**
 * What a worker credential may do, and nothing more. An environment key polls its own
 * environment, acknowledges, heartbeats and stops its items, and lists them. A work item's
 * sessions token heartbeats and stops that item, and reads and answers that item's session
 * (retrieve, list and stream events, post `user.tool_result`). Anything else is refused with
 * the API's permission error, naming what the credential is for.
 */
export function checkWorkerScope(p: WorkPrincipal, method: string, path: string): void {
  if (p.kind === 'environment_key') {
    const m = (method === 'GET' && (POLL.exec(path) ?? LIST.exec(path))) || (method === 'POST' && WORK_ITEM_CALL.exec(path));
    if (!m) throw new ApiError('permission_error', `an environment key can only poll for work and acknowledge, heartbeat, stop and list work items; ${method} ${path} needs the API key`);
    if (decodeURIComponent(m[1]!) !== p.environmentId) throw new ApiError('permission_error', `this environment key belongs to environment '${p.environmentId}', not '${decodeURIComponent(m[1]!)}'`);
    return;
  }
  const item = method === 'POST' ? WORK_ITEM_CALL.exec(path) : null;
  if (item && item[3] !== 'ack') {
    if (decodeURIComponent(item[2]!) !== p.workId) throw new ApiError('permission_error', `this work secret belongs to work item '${p.workId}', not '${decodeURIComponent(item[2]!)}'`);
    return;
  }
  const s = SESSION_CALL.exec(path);
  const allowed = s && (method === 'GET' || (method === 'POST' && s[2] === '/events' && !s[3]));
  if (!s || !allowed) throw new ApiError('permission_error', `a work secret can only heartbeat and stop its work item and read and answer its session; ${method} ${path} is refused`);
  if (decodeURIComponent(s[1]!) !== p.sessionId) throw new ApiError('permission_error', `this work secret is scoped to session '${p.sessionId ?? '(none: a health check)'}', not '${decodeURIComponent(s[1]!)}'`);
}

/**
 * For the /v1 middleware, after the API key did not match: true when `presented` is a worker
 * credential (an environment key or a work item's sessions token), which is then the request's
 * principal; a worker credential used beyond its scope throws the API's permission error.
 * False for anything else (the caller answers 401).
 */
export function acceptWorkerCredential(c: Context, host: Pick<Host, 'dialIn'>, presented: string | undefined): boolean {
  const worker = host.dialIn.principal(presented);
  if (!worker) return false;
  checkWorkerScope(worker, c.req.method, c.req.path);
  setPrincipal(c, worker);
  return true;
}
