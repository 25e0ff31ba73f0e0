import { LogInputError, type EventInput } from './types';

/**
 * Largest event the log accepts: its JSON as stored, in UTF-8 bytes (4 MiB). Every reader of
 * the log (the SSE stream, the UI, a brain) holds whole events, so this bounds what one event
 * costs each of them. Large data belongs elsewhere: a hand's full output is kept in
 * `DATA/outputs`, the model gets a capped copy. It leaves room for a base64 image of about 3 MB.
 */
export const MAX_EVENT_BYTES = 4 * 1024 * 1024;
/** What an event type looks like: dotted lower-case words (user.message, hand.ready). */
export const EVENT_TYPE_PATTERN = /^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)+$/;
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
  if (typeof type !== 'string' || !EVENT_TYPE_PATTERN.test(type)) {
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
  if (json.length * 3 > MAX_EVENT_BYTES) {
    const bytes = Buffer.byteLength(json);
    if (bytes > MAX_EVENT_BYTES) throw new LogInputError(oversizeMessage(event, where, bytes));
  }
  return json;
}

const fmt = (n: number) => n.toLocaleString('en-US');

/** Says how big the event is and names its largest field, the one to make smaller. */
function oversizeMessage(event: object, where: string, bytes: number): string {
  let largest: { path: string; bytes: number } | undefined;
  try {
    largest = largestString(event, where);
  } catch {
    // Nested too deeply to walk: the size alone still says what is wrong.
  }
  const field = largest ? `; its largest field, ${largest.path}, is ${fmt(largest.bytes)} bytes` : '';
  return `${where} is ${fmt(bytes)} bytes of JSON, over the log's limit of ${fmt(MAX_EVENT_BYTES)} bytes (4 MiB) per event${field}`;
}

/** The string value with the most UTF-8 bytes anywhere in `value`, with its path. */
export function largestString(value: unknown, path: string): { path: string; bytes: number } | undefined {
  if (typeof value === 'string') return { path, bytes: Buffer.byteLength(value) };
  if (typeof value !== 'object' || value === null) return undefined;
  let best: { path: string; bytes: number } | undefined;
  const entries = Array.isArray(value) ? value.map((v, i) => [`[${i}]`, v] as const) : Object.entries(value).map(([k, v]) => [`.${k}`, v] as const);
  for (const [step, child] of entries) {
    const found = largestString(child, path + step);
    if (found && (!best || found.bytes > best.bytes)) best = found;
  }
  return best;
}
