import { LogInputError, type EventInput } from './types';

/** Largest event body the log accepts; bigger outputs are kept outside the log (hands issue). */
export const MAX_EVENT_BYTES = 16 * 1024 * 1024;
const TYPE_PATTERN = /^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)+$/;
const RESERVED = ['processed_at', 'seq'] as const;
/** A caller may name an event's id in advance (the brain does, so live text can point at it). */
const EVENT_ID = /^sevt_[0-9A-HJKMNP-TV-Z]{26}$/;

/**
 * Structural checks every appended event passes: a plain object with a dotted `type` and no
 * fields the log assigns itself. Size and serialisability are checked by `serialiseEvent` as
 * it is stored. Per-type shapes are checked where events enter (the API's schemas, the brain).
 */
export function checkEventInput(event: unknown, where = 'event'): asserts event is EventInput {
  if (typeof event !== 'object' || event === null || Array.isArray(event)) {
    throw new LogInputError(`${where} must be an object`);
  }
  const type = (event as { type?: unknown }).type;
  if (typeof type !== 'string' || !TYPE_PATTERN.test(type)) {
    throw new LogInputError(`${where}.type must be a dotted event type such as 'user.message', got ${JSON.stringify(type)}`);
  }
  const id = (event as { id?: unknown }).id;
  if (id !== undefined && (typeof id !== 'string' || !EVENT_ID.test(id))) {
    throw new LogInputError(`${where}.id must be an event id made in advance (sevt_ + a ULID), or absent`);
  }
  for (const field of RESERVED) {
    if (field in event) throw new LogInputError(`${where}.${field} is assigned by the log and cannot be given`);
  }
}

/** The stored JSON of an event, or a LogInputError if it cannot be stored. */
export function serialiseEvent(event: object, where = 'event'): string {
  let json: string;
  try {
    json = JSON.stringify(event);
  } catch (err) {
    throw new LogInputError(`${where} is not serialisable: ${(err as Error).message}`);
  }
  // Bytes are at most 3× UTF-16 units: only measure when it could matter.
  if (json.length * 3 > MAX_EVENT_BYTES && Buffer.byteLength(json) > MAX_EVENT_BYTES) {
    throw new LogInputError(`${where} is larger than ${MAX_EVENT_BYTES} bytes`);
  }
  return json;
}
