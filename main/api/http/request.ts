import type { Context } from 'hono';
import type { z } from 'zod';
import { ApiError, clip, describeZodError, isClientGone } from './errors';
import { describeJsonProblem } from './json-error';
import { MAX_JSON_DEPTH, nestsDeeperThan } from './json-depth';

/**
 * Reads and validates a JSON body: malformed JSON, nesting deeper than MAX_JSON_DEPTH and schema
 * mismatches become clear 400s; a body cut off by the client is a quiet 400 nobody reads.
 */
export async function jsonBody<S extends z.ZodType>(c: Context, schema: S): Promise<z.output<S>> {
  let text: string;
  try {
    text = await c.req.text();
  } catch (err) {
    if (!isClientGone(err, c.req.raw.signal)) throw err;
    throw new ApiError('invalid_request_error', 'the request body ended early (the client closed the connection)');
  }
  if (text.trim() === '') {
    const empty = schema.safeParse({});
    if (empty.success) return empty.data;
    throw new ApiError('invalid_request_error', 'the request needs a JSON body');
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    // Not V8's message: it quotes a piece of the body, which may be a secret.
    throw new ApiError('invalid_request_error', describeJsonProblem(text));
  }
  if (nestsDeeperThan(raw, MAX_JSON_DEPTH)) throw new ApiError('invalid_request_error', `the body nests objects or arrays deeper than ${MAX_JSON_DEPTH} levels`);
  const parsed = schema.safeParse(raw);
  if (!parsed.success) throw new ApiError('invalid_request_error', describeZodError(parsed.error));
  return parsed.data;
}

/** An integer query parameter within bounds. */
export function queryInt(c: Context, name: string, opts: { min: number; max: number; fallback?: number }): number | undefined {
  const raw = c.req.query(name);
  if (raw === undefined || raw === '') return opts.fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < opts.min || n > opts.max) {
    throw new ApiError('invalid_request_error', `${name} must be a whole number from ${opts.min} to ${opts.max}, got '${clip(raw)}'`);
  }
  return n;
}

export function queryBool(c: Context, name: string): boolean | undefined {
  const raw = c.req.query(name);
  if (raw === undefined || raw === '') return undefined;
  if (raw === 'true' || raw === '1') return true;
  if (raw === 'false' || raw === '0') return false;
  throw new ApiError('invalid_request_error', `${name} must be true or false, got '${clip(raw)}'`);
}

export function queryEnum<T extends string>(c: Context, name: string, values: readonly T[]): T | undefined {
  const raw = c.req.query(name);
  if (raw === undefined || raw === '') return undefined;
  if (!(values as readonly string[]).includes(raw)) {
    throw new ApiError('invalid_request_error', `${name} must be one of ${values.join(', ')}, got '${clip(raw)}'`);
  }
  return raw as T;
}

/** A list parameter: `name[]=a&name[]=b` (the SDK's form), `name=a&name=b` or `name=a,b`. */
export function queryList(c: Context, name: string): string[] | undefined {
  const values = [...(c.req.queries(`${name}[]`) ?? []), ...(c.req.queries(name) ?? [])];
  if (values.length === 0) return undefined;
  return values.flatMap((v) => v.split(',')).map((v) => v.trim()).filter(Boolean);
}

/**
 * RFC 3339's date-time: a date, a time to the second (fractions allowed) and Z or an offset. A
 * space stands for the offset's '+' (an unencoded '+' in a query string reads as one).
 */
const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d{1,9})?([Zz]|[+\- ]\d{2}:\d{2})$/;

/** An RFC 3339 timestamp filter, normalised to the stored form for comparison. */
export function queryTime(c: Context, name: string): string | undefined {
  const raw = c.req.query(name);
  if (raw === undefined || raw === '') return undefined;
  // Date.parse alone takes '1' (the year 2001) and other forms a client did not mean.
  const t = RFC3339.test(raw) ? Date.parse(raw.replace(/ (\d{2}:\d{2})$/, '+$1')) : NaN;
  if (Number.isNaN(t)) throw new ApiError('invalid_request_error', `${name} must be an RFC 3339 timestamp such as 2026-01-31T12:00:00Z, got '${clip(raw)}'`);
  return new Date(t).toISOString();
}
