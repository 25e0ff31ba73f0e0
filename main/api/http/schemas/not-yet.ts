import type { z } from 'zod';

/**
 * The message every refusal of an API feature Corral has not built carries, so a client written
 * for the hosted service learns at the door (400, naming the field) instead of getting a
 * session that silently does something else.
 */
export function notSupportedMessage(field: string, why: string): string {
  return `${field} is not supported by Corral yet (${why})`;
}

/** Whether a value asks for nothing: absent, null, or an empty list. */
function asksNothing(v: unknown): boolean {
  return v === undefined || v === null || (Array.isArray(v) && v.length === 0);
}

/**
 * Refuses any value of `schema` that asks for something (absent, null and `[]` pass: they mean
 * the feature's off). The shape is still checked first, so a malformed value gets the usual
 * message. `allow` lets a value through that means what Corral already does (a default).
 */
export function notYet<T extends z.ZodType>(schema: T, field: string, why: string, allow?: (v: z.output<T>) => boolean): T {
  return schema.refine((v) => asksNothing(v) || (allow?.(v) ?? false), { message: notSupportedMessage(field, why) }) as T;
}

/** Refuses every value (for an event type or a variant whose whole feature is not built). */
export function neverYet<T extends z.ZodType>(schema: T, field: string, why: string): T {
  return schema.refine(() => false, { message: notSupportedMessage(field, why) }) as T;
}
