import { Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import type { Host } from '../../host';
import type { SlowReaderOptions } from '../reader-limits';
import { presentedKey } from './auth';
import { guardCredential } from './auth-guard';
import { corralAuthRoutes } from './routes/corral-auth';
import { FailureThrottle } from './throttle';
import { ServerAuth } from './ui-auth';
import { ApiError, errorResponse, isClientGone, toApiError } from './errors';
import { newRequestId } from './ids';
import { requestLog } from './request-log';
import { agentRoutes } from './routes/agents';
import { environmentRoutes } from './routes/environments';
import { eventRoutes } from './routes/events';
import { handCatalogRoutes, handRoutes } from './routes/hands';
import { machineRoutes } from './routes/machines';
import { healthRoutes } from './routes/health';
import { sessionRoutes } from './routes/sessions';
import { sessionExtraRoutes } from './routes/session-extras';
import { sessionResourceRoutes } from './routes/session-resources';
import { refuseWorkspace } from './workspace';
import { refuseUnknownBetas } from './betas';
import { uiRoutes } from './routes/ui';
import { vaultRoutes } from './routes/vaults';
import { workRoutes } from './routes/work';
import { workerEventRoutes } from './routes/worker-events';
import { acceptWorkerCredential } from './work-auth';

/** Options of the HTTP app. */
export interface ApiAppOptions extends SlowReaderOptions {
  /** The API key at start; {@link auth} holds it from then on (it may rotate). */
  apiKey: string;
  /** Where a rotated key is written (DATA/api-key). */
  keyFile?: string;
  /** The credentials' state; made from apiKey/keyFile when absent. */
  auth?: ServerAuth;
  rendererDir: string;
  /** Largest request body accepted (bytes). */
  maxBodyBytes?: number;
  heartbeatMs?: number;
  /** Host names (with port) requests may name; others are refused (DNS rebinding). Empty: any. */
  allowedHosts?: readonly string[];
}

/**
 * The headless server's routes: the Managed-Agents-compatible API under /v1 (API key
 * required), `/health` (no key), and the UI (cookie-authorised WebSocket + static renderer).
 * Every request is logged to the host's logger.
 */
export function createApiApp(host: Host, opts: ApiAppOptions): Hono {
  const app = new Hono();
  const maxBody = opts.maxBodyBytes ?? 32 * 1024 * 1024;
  const auth = opts.auth ?? new ServerAuth({ key: opts.apiKey, keyFile: opts.keyFile });
  // Wrong keys and wrong link codes add up per address, each kind apart (auth-guard.ts).
  const throttle = new FailureThrottle();

  const logger = host.logger;
  app.onError((err, c) => {
    const reqId = c.get('requestId' as never) as string | undefined;
    if (isClientGone(err, c.req.raw.signal)) {
      // An aborted upload: nobody is left to answer, and it is not the server's fault.
      logger.info({ req_id: reqId }, 'client closed the connection mid-request');
      return errorResponse(c, new ApiError('invalid_request_error', 'the request ended early (the client closed the connection)'));
    }
    const apiErr = toApiError(err);
    if (apiErr.status >= 500) logger.error({ req_id: reqId, err }, 'request failed');
    return errorResponse(c, apiErr);
  });
  app.notFound((c) =>
    errorResponse(
      c,
      new ApiError('not_found_error', `nothing at ${c.req.path}`),
    ),
  );

  app.use('*', requestLog(logger));
  app.use('*', async (c, next) => {
    const id = newRequestId();
    c.set('requestId' as never, id as never);
    c.header('request-id', id);
    if (opts.allowedHosts && opts.allowedHosts.length > 0 && !opts.allowedHosts.includes(c.req.header('host') ?? '')) {
      return errorResponse(c, new ApiError('permission_error', `requests for host '${c.req.header('host')}' are refused`));
    }
    await next();
  });

  app.route('/health', healthRoutes(host));

  const v1 = new Hono();
  v1.use('*', async (c, next) => {
    const presented = presentedKey(c.req.raw.headers);
    // Machines that dial in hold narrower credentials: an environment key, or a work item's secret.
    // Both kinds count as attempts for the per-address throttle.
    const refused = guardCredential(
      c,
      throttle,
      'key',
      () => auth.keyMatches(presented) || acceptWorkerCredential(c, host, presented),
      () => errorResponse(c, new ApiError('authentication_error', 'invalid or missing API key (send it as x-api-key or Authorization: Bearer)')),
    );
    if (refused) return refused;
    await next();
  });
  v1.use(
    '*',
    bodyLimit({
      maxSize: maxBody,
      onError: (c) => errorResponse(c, new ApiError('request_too_large', `the request body is larger than ${maxBody} bytes`)),
    }),
  );
  v1.use('*', refuseWorkspace);
  v1.use('*', refuseUnknownBetas);
  v1.route('/agents', agentRoutes(host));
  v1.route('/environments', workRoutes(host));
  v1.route('/environments', environmentRoutes(host));
  v1.route('/sessions', workerEventRoutes(host));
  v1.route('/sessions', eventRoutes(host, { heartbeatMs: opts.heartbeatMs ?? 15_000, stallMs: opts.stallMs }));
  v1.route('/sessions', sessionRoutes(host));
  v1.route('/sessions', handRoutes(host));
  v1.route('/sessions', sessionExtraRoutes(host));
  v1.route('/sessions', sessionResourceRoutes(host));
  v1.route('/hands', handCatalogRoutes());
  v1.route('/hands', machineRoutes(host));
  v1.route('/vaults', vaultRoutes(host));
  v1.route('/corral', corralAuthRoutes(auth, opts.keyFile));
  v1.all('*', (c) =>
    errorResponse(c, new ApiError('not_found_error', `${c.req.method} ${c.req.path} is not available in Corral (not built yet, or not an API route)`)),
  );
  app.route('/v1', v1);
  app.route('/', uiRoutes(host, { auth, throttle, rendererDir: opts.rendererDir, stallMs: opts.stallMs }));
  return app;
}
