import { z } from 'zod';
import { isBoundedJsonObject } from './bounded-json';

/**
 * The events a brain may append, field by field. A brain runs model-driven code, so the host
 * checks each one against these before it reaches the log: user events come only from users,
 * and a brain cannot slip other fields or types in.
 */

/** Largest text a brain may put in one block (the log caps a whole event at 4 MiB; see fit-event.ts). */
const MAX_TEXT = 8 * 1024 * 1024;
/** Tool inputs and result details: plain JSON, this large and this deep at most. */
export const MAX_TOOL_INPUT_CHARS = 4 * 1024 * 1024;
export const MAX_JSON_DEPTH = 64;

export const eventId = z.string().regex(/^sevt_[0-9A-HJKMNP-TV-Z]{26}$/, 'an event id (sevt_ + a ULID)');
const seq = z.int().min(0);
const count = z.int().min(0).max(Number.MAX_SAFE_INTEGER);
/** A tool's name as the model gave it (the hand answers unknown ones with an error). */
export const toolName = z.string().min(1).max(256);
export const toolInput = z.custom<Record<string, unknown>>((v) => isBoundedJsonObject(v, MAX_TOOL_INPUT_CHARS, MAX_JSON_DEPTH), {
  message: `must be a JSON object of at most ${MAX_TOOL_INPUT_CHARS} characters, nested at most ${MAX_JSON_DEPTH} deep`,
});
const textBlock = z.strictObject({ type: z.literal('text'), text: z.string().max(MAX_TEXT) });
const imageBlock = z.strictObject({
  type: z.literal('image'),
  source: z.strictObject({ type: z.literal('base64'), media_type: z.enum(['image/png', 'image/jpeg', 'image/gif', 'image/webp']), data: z.string().max(MAX_TEXT) }),
});
/** A server tool's block as the model sent it: plain bounded JSON, of the API's server block types. */
const serverBlock = z.custom<Record<string, unknown>>(
  (v) => isBoundedJsonObject(v, MAX_TOOL_INPUT_CHARS, MAX_JSON_DEPTH) && ['server_tool_use', 'web_search_tool_result', 'web_fetch_tool_result'].includes(String((v as { type?: unknown }).type)),
  { message: 'must be a server_tool_use, web_search_tool_result or web_fetch_tool_result block' },
);
const modelErrorType = z.enum(['model_rate_limited_error', 'model_overloaded_error', 'model_request_failed_error']);

export const brainEventInput = z.discriminatedUnion('type', [
  /** Corral: `run_confirmed` names a call the user allowed that this brain starts now (so a brain after a crash knows it may have run). */
  z.strictObject({ type: z.literal('session.status_running'), run_confirmed: eventId.optional() }),
  z.strictObject({
    type: z.literal('session.status_idle'),
    stop_reason: z.discriminatedUnion('type', [
      z.strictObject({ type: z.literal('end_turn') }),
      z.strictObject({ type: z.literal('retries_exhausted') }),
      z.strictObject({ type: z.literal('requires_action'), event_ids: z.array(eventId).min(1).max(1000) }),
    ]),
    stop_details: z.null(),
    handled_through: seq,
  }),
  z.strictObject({ type: z.literal('session.status_rescheduled'), retry_in_ms: z.int().min(0).max(3_600_000), attempt: z.int().min(1).max(1000), error_type: modelErrorType }),
  z.strictObject({
    type: z.literal('session.error'),
    error: z.strictObject({ type: modelErrorType, message: z.string().max(10_000), retry_status: z.strictObject({ type: z.enum(['exhausted', 'terminal']) }) }),
  }),
  z.strictObject({
    type: z.literal('span.model_request_start'),
    id: eventId.optional(),
    context_seq: seq,
    /** Every tool result up to this position (`elided_count` of them) was elided from the request. */
    elided_through: seq.optional(),
    elided_count: z.int().min(1).optional(),
    /** Events up to this position were dropped from the request to fit the window (context-drop.ts). */
    dropped_through: seq.optional(),
  }),
  z.strictObject({
    type: z.literal('span.model_request_end'),
    model_request_start_id: eventId,
    is_error: z.boolean(),
    model_usage: z.strictObject({ input_tokens: count, output_tokens: count, cache_read_input_tokens: count, cache_creation_input_tokens: count }),
    stop_reason: z.string().min(1).max(64).optional(),
    /** From sending the request to the first block of the reply. */
    first_token_ms: z.int().min(0).max(86_400_000).optional(),
    error: z.strictObject({ type: modelErrorType.optional(), message: z.string().max(10_000), status: z.int().min(100).max(599).optional() }).optional(),
  }),
  z.strictObject({ type: z.literal('agent.message'), id: eventId.optional(), content: z.array(textBlock).min(1).max(100) }),
  z.strictObject({
    type: z.literal('agent.thinking'),
    id: eventId.optional(),
    thinking: z.string().max(MAX_TEXT).optional(),
    signature: z.string().max(64 * 1024).optional(),
    redacted: z.literal(true).optional(),
  }),
  z.strictObject({
    type: z.literal('agent.tool_use'),
    /** Chosen by the brain, so the call can be sent right behind its append (block-appends.ts). */
    id: eventId.optional(),
    name: toolName,
    input: toolInput,
    model_tool_use_id: z.string().min(1).max(256),
    input_dropped: z.strictObject({ bytes: count, reason: z.string().max(1000) }).optional(),
    evaluated_permission: z.enum(['allow', 'ask', 'deny']).optional(),
    evaluation: z.strictObject({ type: z.enum(['always_allow', 'always_ask']) }).optional(),
    /** Corral: a server tool's call (main/brain/server-tools.ts), the block as the model sent it. */
    server_block: serverBlock.optional(),
  }),
  z.strictObject({ type: z.literal('agent.custom_tool_use'), name: toolName, input: toolInput, model_tool_use_id: z.string().min(1).max(256), input_dropped: z.strictObject({ bytes: count, reason: z.string().max(1000) }).optional() }),
  z.strictObject({
    type: z.literal('agent.mcp_tool_use'),
    name: toolName,
    mcp_server_name: z.string().min(1).max(255),
    input: toolInput,
    model_tool_use_id: z.string().min(1).max(256),
    input_dropped: z.strictObject({ bytes: count, reason: z.string().max(1000) }).optional(),
    evaluated_permission: z.enum(['allow', 'ask', 'deny']).optional(),
    evaluation: z.strictObject({ type: z.enum(['always_allow', 'always_ask']) }).optional(),
  }),
  z.strictObject({
    type: z.literal('agent.mcp_tool_result'),
    mcp_tool_use_id: eventId,
    content: z.array(z.discriminatedUnion('type', [textBlock, imageBlock])).min(1).max(100),
    is_error: z.boolean(),
    details: z.custom<Record<string, unknown>>((v) => isBoundedJsonObject(v, 64 * 1024, 16), { message: 'must be a small JSON object' }).optional(),
  }),
  z.strictObject({
    type: z.literal('agent.tool_result'),
    tool_use_id: eventId,
    content: z.array(z.discriminatedUnion('type', [textBlock, imageBlock])).min(1).max(100),
    is_error: z.boolean(),
    details: z.custom<Record<string, unknown>>((v) => isBoundedJsonObject(v, 64 * 1024, 16), { message: 'must be a small JSON object' }).optional(),
    /** Corral: a server tool's result block as the model sent it. */
    server_block: serverBlock.optional(),
  }),
]);

/** An event a brain may append. */
export type BrainEventInput = z.infer<typeof brainEventInput>;
