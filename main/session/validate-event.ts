import { LogInputError, type EventInput } from './types';

/** Largest event body the log accepts; bigger outputs are kept outside the log (hands issue). */
export const MAX_EVENT_BYTES = 16 * 1024 * 1024;
const TYPE_PATTERN = /^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)+$/;
const RESERVED = ['id', 'processed_at', 'seq'] as const;

/**
 * Structural checks every appended event passes: a plain object with a dotted `type`, no fields
 * the log assigns itself, JSON-serialisable and not oversized. Per-type shapes are checked
 * where events enter (the API's schemas, the brain's own code).
 */
export function checkEventInput(event: unknown, where = 'event'): asserts event is EventInput {
  if (typeof event !== 'object' || event === null || Array.isArray(event)) {
    throw new LogInputError(`${where} must be an object`);
  }
  const type = (event as { type?: unknown }).type;
  if (typeof type !== 'string' || !TYPE_PATTERN.test(type)) {
    throw new LogInputError(`${where}.type must be a dotted event type such as 'user.message', got ${JSON.stringify(type)}`);
  }
  for (const field of RESERVED) {
    if (field in event) throw new LogInputError(`${where}.${field} is assigned by the log and cannot be given`);
  }
  let json: string;
  try {
    json = JSON.stringify(event);
  } catch (err) {
    throw new LogInputError(`${where} is not serialisable: ${(err as Error).message}`);
  }
  if (Buffer.byteLength(json) > MAX_EVENT_BYTES) {
    throw new LogInputError(`${where} is larger than ${MAX_EVENT_BYTES} bytes`);
  }
}
