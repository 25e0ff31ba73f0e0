import type { MiddlewareHandler } from 'hono';
import { ApiError, errorResponse } from './errors';
import { notSupportedMessage } from './schemas/not-yet';

/**
 * The SDK sends a call's `workspace_id` as the `anthropic-workspace-id` header. Corral has one
 * workspace, its own; a request that names one would be answered from it all the same, which a
 * program relying on workspaces would not expect: refused instead, naming the parameter.
 */
export const refuseWorkspace: MiddlewareHandler = async (c, next) => {
  if (c.req.header('anthropic-workspace-id') !== undefined) {
    return errorResponse(c, new ApiError('invalid_request_error', notSupportedMessage('workspace_id (the anthropic-workspace-id header)', 'one workspace per host')));
  }
  await next();
};
