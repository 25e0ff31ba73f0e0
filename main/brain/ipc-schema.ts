import { z } from 'zod';
import { brainEventInput, eventId, toolInput, toolName } from './brain-event-schema';
import type { BrainOp, BrainRequest, BrainRequests, BrainToHost } from './ipc-protocol';

/**
 * The host's check of every message a brain sends. A brain runs model-driven code paths, so its
 * messages are untrusted: each is parsed here before the host acts on it, and nothing a brain
 * sends can make the host throw.
 */

const position = z.int().min(0).max(Number.MAX_SAFE_INTEGER);
const requestId = z.int().min(1).max(Number.MAX_SAFE_INTEGER);
const timeBound = z.string().max(64).optional();

const slice = z.strictObject({
  after: position.optional(),
  before: position.optional(),
  from: position.optional(),
  to: position.optional(),
  types: z.array(z.string().min(1).max(128)).max(100).optional(),
  processedAfter: timeBound,
  processedFrom: timeBound,
  processedBefore: timeBound,
  processedTo: timeBound,
  order: z.enum(['asc', 'desc']).optional(),
  limit: z.int().min(1).max(100_000).optional(),
  maxBytes: z.int().min(1).optional(),
});

const noArgs = z.strictObject({}) as unknown as z.ZodType<Record<string, never>>;

/** The arguments of each operation, typed from BrainRequests (a change to one breaks the other). */
export const requestArgs: { [Op in BrainOp]: z.ZodType<BrainRequests[Op]['args']> } = {
  readEvents: z.strictObject({ slice }),
  readPage: z.strictObject({ slice }),
  emit: z.strictObject({ events: z.array(brainEventInput).min(1).max(64), key: z.string().min(1).max(200) }),
  execute: z.strictObject({ name: toolName, input: toolInput, hand: z.string().min(1).max(128).optional(), toolUseId: eventId }),
  hands: noArgs,
  agent: noArgs,
  mcpTools: noArgs,
  mcpCall: z.strictObject({ server: z.string().min(1).max(255), tool: toolName, input: toolInput, toolUseId: eventId }),
};

const liveDelta = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('event_start'), event: z.strictObject({ id: eventId, type: z.enum(['agent.message', 'agent.thinking']) }) }),
  z.strictObject({
    type: z.literal('event_delta'),
    event_id: eventId,
    delta: z.strictObject({
      type: z.literal('content_delta'),
      content: z.strictObject({ type: z.literal('text'), text: z.string().max(1024 * 1024) }),
      index: z.int().min(0).max(10_000),
    }),
  }),
]);

const envelope = z.discriminatedUnion('t', [
  z.strictObject({ t: z.literal('req'), id: requestId, op: z.enum(Object.keys(requestArgs) as [BrainOp, ...BrainOp[]]), args: z.unknown() }),
  z.strictObject({ t: z.literal('cancel'), id: requestId }),
  z.strictObject({ t: z.literal('delta'), delta: liveDelta }),
  z.strictObject({ t: z.literal('idle'), through: position }),
  z.strictObject({ t: z.literal('batch'), messages: z.array(z.unknown()).min(1).max(100) }),
]);

/** A message that passed, or why not and (for a request with a usable id) whom to tell. */
export type ParsedBrainMessage = { ok: true; message: BrainToHost } | { ok: false; error: string; replyTo?: number };

/** Parses a message inside a batch: the same, except that batches do not nest. */
export function parseBatchedMessage(raw: unknown): ParsedBrainMessage {
  const parsed = parseBrainMessage(raw);
  return parsed.ok && parsed.message.t === 'batch' ? { ok: false, error: 'malformed message: batches do not nest' } : parsed;
}

/** Parses one message from a brain; never throws (not even for a value whose reads throw). */
export function parseBrainMessage(raw: unknown): ParsedBrainMessage {
  try {
    return parse(raw);
  } catch {
    return { ok: false, error: 'unreadable message' };
  }
}

function parse(raw: unknown): ParsedBrainMessage {
  const env = envelope.safeParse(raw);
  if (!env.success) {
    // A request whose envelope is wrong still gets an answer when its id can be read.
    const id = typeof raw === 'object' && raw !== null && (raw as { t?: unknown }).t === 'req' ? requestId.safeParse((raw as { id?: unknown }).id) : undefined;
    return { ok: false, error: `malformed message: ${summary(env.error)}`, replyTo: id?.success ? id.data : undefined };
  }
  const m = env.data;
  if (m.t === 'batch') return { ok: true, message: m as BrainToHost };
  if (m.t !== 'req') return { ok: true, message: m };
  let args;
  try {
    args = requestArgs[m.op].safeParse(m.args);
  } catch {
    return { ok: false, error: `unreadable arguments to ${m.op}`, replyTo: m.id };
  }
  if (!args.success) return { ok: false, error: `bad arguments to ${m.op}: ${summary(args.error)}`, replyTo: m.id };
  return { ok: true, message: { t: 'req', id: m.id, op: m.op, args: args.data } as BrainRequest };
}

/** The first few issues, short: a reply never echoes a large value back. */
function summary(error: z.ZodError): string {
  return error.issues
    .slice(0, 3)
    .map((i) => `${i.path.join('.') || '(message)'}: ${i.message.slice(0, 200)}`)
    .join('; ');
}
