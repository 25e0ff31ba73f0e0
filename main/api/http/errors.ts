import type { Context } from 'hono';
import { HTTPException } from 'hono/http-exception';
import { z } from 'zod';
import { BadCursorError } from '../../db/pagination';
import { VersionConflictError } from '../../catalog/agents';
import { HandRequestError } from '../../hands/membership';
import { LogInputError, SessionNotFoundError } from '../../session/types';

/** Anthropic's error types and the HTTP status each goes with. */
export type ApiErrorType =
  | 'invalid_request_error'
  | 'authentication_error'
  | 'permission_error'
  | 'not_found_error'
  | 'conflict_error'
  | 'request_too_large'
  | 'api_error';

const STATUS: Record<ApiErrorType, number> = {
  invalid_request_error: 400,
  authentication_error: 401,
  permission_error: 403,
  not_found_error: 404,
  conflict_error: 409,
  request_too_large: 413,
  api_error: 500,
};

/** An error the API reports as `{"type":"error","error":{type,message,details?}}`. */
export class ApiError extends Error {
  readonly status: number;
  constructor(
    readonly type: ApiErrorType,
    message: string,
    readonly details?: { error_code: string; [k: string]: unknown },
  ) {
    super(message);
    this.status = STATUS[type];
  }
}

export const notFound = (what: string, id: string) => new ApiError('not_found_error', `${what} '${id}' was not found`);

/** Formats zod issues as one readable line: `events.0.type: Invalid input; …`. */
export function describeZodError(err: z.ZodError): string {
  return err.issues
    .slice(0, 10)
    .map((i) => `${i.path.length ? i.path.join('.') : 'body'}: ${i.message}`)
    .join('; ');
}

/** Maps anything thrown in a handler to the API error a client sees. */
export function toApiError(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  if (err instanceof SessionNotFoundError) return notFound('session', err.sessionId);
  if (err instanceof LogInputError || err instanceof BadCursorError) return new ApiError('invalid_request_error', err.message);
  if (err instanceof HandRequestError) return new ApiError(err.kind === 'not_found' ? 'not_found_error' : 'invalid_request_error', err.message);
  if (err instanceof VersionConflictError) return new ApiError('conflict_error', err.message);
  if (err instanceof z.ZodError) return new ApiError('invalid_request_error', describeZodError(err));
  if (err instanceof HTTPException) {
    const type: ApiErrorType = err.status === 413 ? 'request_too_large' : err.status === 401 ? 'authentication_error' : err.status < 500 ? 'invalid_request_error' : 'api_error';
    return new ApiError(type, err.message || 'bad request');
  }
  console.error('corral: request failed:', err);
  return new ApiError('api_error', 'internal server error (see the server log)');
}

export function errorResponse(c: Context, err: ApiError): Response {
  const requestId = c.get('requestId' as never) as string | undefined;
  // SDK clients retry 409s; a version conflict will not resolve by itself.
  if (err.type === 'conflict_error') c.header('x-should-retry', 'false');
  return c.json(
    {
      type: 'error',
      error: { type: err.type, message: err.message, ...(err.details ? { details: err.details } : {}) },
      ...(requestId ? { request_id: requestId } : {}),
    },
    err.status as 400,
  );
}
