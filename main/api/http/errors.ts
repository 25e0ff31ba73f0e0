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
  | 'rate_limit_error'
  | 'api_error';

const STATUS: Record<ApiErrorType, number> = {
  invalid_request_error: 400,
  authentication_error: 401,
  permission_error: 403,
  not_found_error: 404,
  conflict_error: 409,
  request_too_large: 413,
  rate_limit_error: 429,
  api_error: 500,
};

/** Longest error message sent back: a message may quote the input, which may be megabytes. */
const MAX_MESSAGE_CHARS = 2000;

/** A piece of input quoted in a message, cut to `max` characters with the cut said plainly. */
export function clip(text: string, max = 100): string {
  return text.length <= max ? text : `${text.slice(0, max)}… (${text.length - max} more characters)`;
}

/** An error the API reports as `{"type":"error","error":{type,message,details?}}`. */
export class ApiError extends Error {
  readonly status: number;
  constructor(
    readonly type: ApiErrorType,
    message: string,
    readonly details?: { error_code: string; [k: string]: unknown },
  ) {
    super(clip(message, MAX_MESSAGE_CHARS));
    this.status = STATUS[type];
  }
}

export const notFound = (what: string, id: string) => new ApiError('not_found_error', `${what} '${clip(id)}' was not found`);

/** Formats zod issues as one readable line: `events.0.type: Invalid input; …` (keys and messages clipped). */
export function describeZodError(err: z.ZodError): string {
  return err.issues
    .slice(0, 10)
    .map((i) => `${i.path.length ? i.path.map((p) => clip(String(p), 64)).join('.') : 'body'}: ${clip(i.message, 200)}`)
    .join('; ');
}

/**
 * Whether a failure only means the client went away mid-request (an aborted upload): nobody is
 * left to answer, and it is no fault of the server.
 */
export function isClientGone(err: unknown, signal?: AbortSignal): boolean {
  if (signal?.aborted) return true;
  // Node's error for a request whose connection closed before its body ended.
  const e = err as { code?: unknown; message?: unknown } | undefined;
  return (e?.code === 'ECONNRESET' && e?.message === 'aborted') || e?.code === 'ERR_STREAM_PREMATURE_CLOSE';
}

/** Maps anything thrown in a handler to the API error a client sees (500 for anything unexpected: the caller logs it). */
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
