import type { EventInput } from '../session/types';
import { MAX_EVENT_BYTES } from '../session/validate-event';

/** What an event may take before the log adds its id and time (with room to spare). */
export const FIT_BYTES = MAX_EVENT_BYTES - 1024;

/** Set on a tool call whose input was too large to keep: the harness answers it without running it. */
export interface DroppedInput {
  bytes: number;
  reason: string;
}

const bytesOf = (v: unknown) => Buffer.byteLength(JSON.stringify(v));
const isHighSurrogate = (c: number) => c >= 0xd800 && c <= 0xdbff;
const mib = (n: number) => `${(n / 1024 / 1024).toFixed(1)} MiB`;

/**
 * The events to append for `event` so that none is over the log's cap (MAX_EVENT_BYTES): the
 * event itself when it fits, which is nearly always. Otherwise nothing the model said is lost
 * silently and the append never fails:
 * - a model message is split into several `agent.message` events (the first keeps its id);
 * - a tool call keeps its name but not its input, and says so (`input_dropped`): it is answered
 *   with an error, not run with a partial input;
 * - thinking is cut with a note and loses its signature (it is then not sent back to the model);
 * - anything else (a tool result) loses its largest images, then has its longest texts cut in
 *   the middle, each with a note saying how much.
 * Deterministic, so a brain that repeats an append after a crash appends the same events.
 */
export function fitToLog(event: EventInput): EventInput[] {
  const json = JSON.stringify(event);
  if (json.length * 3 <= FIT_BYTES || Buffer.byteLength(json) <= FIT_BYTES) return [event];
  const bytes = Buffer.byteLength(json);
  switch (event.type) {
    case 'agent.message':
      return splitMessage(event);
    case 'agent.tool_use':
    case 'agent.mcp_tool_use':
    case 'agent.custom_tool_use': {
      const dropped: DroppedInput = { bytes: bytesOf(event.input), reason: `the input (${mib(bytesOf(event.input))}) is over the log's limit of 4 MiB per event` };
      return [{ ...event, input: {}, input_dropped: dropped }];
    }
    case 'agent.thinking': {
      const { signature: _unverifiable, ...rest } = event;
      return [shrinkTexts(structuredClone(rest), bytes)];
    }
    default:
      return [shrinkTexts(dropImages(structuredClone(event)), bytes)];
  }
}

/** A model message in parts that each fit, in order; the first keeps the event's id. */
function splitMessage(event: EventInput): EventInput[] {
  const { content, id, ...rest } = event;
  const blocks = (Array.isArray(content) ? content : []) as Record<string, unknown>[];
  const room = FIT_BYTES - bytesOf({ ...rest, id, content: [] }) - 64;
  const pieces = blocks.flatMap((b) => (b.type === 'text' && typeof b.text === 'string' && bytesOf(b) > room ? textPieces(b.text, room).map((text) => ({ ...b, text })) : [b]));
  const events: EventInput[] = [];
  let part: Record<string, unknown>[] = [];
  let size = 0;
  for (const piece of pieces) {
    const n = bytesOf(piece) + 1;
    if (part.length > 0 && size + n > room) {
      events.push({ ...rest, content: part });
      part = [];
      size = 0;
    }
    part.push(piece);
    size += n;
  }
  events.push({ ...rest, content: part });
  if (id !== undefined) events[0] = { ...events[0]!, id };
  return events;
}

/** `text` cut into pieces whose JSON is at most `room` bytes (never inside a surrogate pair). */
function textPieces(text: string, room: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; ) {
    let n = Math.min(text.length - i, room);
    while (n > 1 && bytesOf(text.slice(i, i + n)) > room) n = Math.floor(n / 2);
    if (n > 1 && i + n < text.length && isHighSurrogate(text.charCodeAt(i + n - 1))) n--;
    out.push(text.slice(i, i + n));
    i += n;
  }
  return out;
}

/** Replaces the largest base64 images with a note until the event fits (largest first). */
function dropImages(event: EventInput): EventInput {
  const content = event.content;
  if (!Array.isArray(content)) return event;
  const images = content
    .map((b: Record<string, unknown>, i) => ({ i, data: (b?.type === 'image' && (b.source as { data?: unknown } | undefined)?.data) || '' }))
    .filter((x) => typeof x.data === 'string' && x.data.length > 0)
    .sort((a, b) => (b.data as string).length - (a.data as string).length || a.i - b.i);
  for (const { i, data } of images) {
    if (bytesOf(event) <= FIT_BYTES) break;
    content[i] = { type: 'text', text: `[An image of ${mib((data as string).length)} (base64) is not kept: it is over the log's limit of 4 MiB per event.]` };
  }
  return event;
}

/** Cuts the middle out of the event's longest texts, with a note, until it fits. */
function shrinkTexts(event: EventInput, originalBytes: number): EventInput {
  for (let round = 0; round < 20; round++) {
    const size = bytesOf(event);
    if (size <= FIT_BYTES) return event;
    const longest = longestString(event);
    if (!longest || longest.value.length < 1024) break;
    const { holder, key, value } = longest;
    // Bytes per character of this text, to know how many characters to cut.
    const ratio = bytesOf(value) / value.length;
    const keep = Math.max(0, Math.floor(value.length - (size - FIT_BYTES + 512) / ratio));
    const head = value.slice(0, Math.floor(keep * 0.4));
    const tail = value.slice(value.length - (keep - head.length));
    holder[key] = `${head}\n[… ${(value.length - head.length - tail.length).toLocaleString('en-US')} characters cut here: the event was ${mib(originalBytes)}, over the log's limit of 4 MiB …]\n${tail}`;
  }
  // Nothing long enough to cut (a great many small fields): keep what identifies the event
  // (its type, the call it answers, small flags) and say what happened to the rest.
  const note = `the event was ${mib(originalBytes)}, over the log's limit of 4 MiB, and could not be cut down`;
  const small = Object.entries(event).filter(([, v]) => v === null || typeof v === 'number' || typeof v === 'boolean' || (typeof v === 'string' && v.length < 1024));
  return { ...Object.fromEntries(small), type: event.type, ...(Array.isArray(event.content) ? { content: [{ type: 'text', text: `[${note}]` }] } : {}), not_kept: note };
}

/** The longest string value in `value` (an object or array), with what holds it. */
function longestString(value: unknown): { holder: Record<string | number, unknown>; key: string | number; value: string } | undefined {
  let best: { holder: Record<string | number, unknown>; key: string | number; value: string } | undefined;
  const walk = (holder: Record<string | number, unknown>) => {
    for (const [key, child] of Object.entries(holder)) {
      if (typeof child === 'string') {
        if (!best || child.length > best.value.length) best = { holder, key: Array.isArray(holder) ? Number(key) : key, value: child };
      } else if (typeof child === 'object' && child !== null) walk(child as Record<string, unknown>);
    }
  };
  if (typeof value === 'object' && value !== null) walk(value as Record<string, unknown>);
  return best;
}
