import { z } from 'zod';
import { documentBlock, imageBlock, redactedBlock, searchResultBlock, textBlock } from './common';
import { neverYet, notYet } from './not-yet';

const userContent = z.array(z.discriminatedUnion('type', [textBlock, imageBlock, documentBlock, redactedBlock])).min(1).max(1000);
const resultContent = z.array(z.discriminatedUnion('type', [textBlock, imageBlock, documentBlock, searchResultBlock])).max(1000);

export const userMessageParams = z.object({ type: z.literal('user.message'), content: userContent }).strict();
// Outcomes need a grader loop (span.outcome_evaluation_*) Corral has not built.
export const defineOutcomeParams = neverYet(z
  .object({
    type: z.literal('user.define_outcome'),
    description: z.string().min(1).max(10_000),
    rubric: z.discriminatedUnion('type', [
      z.object({ type: z.literal('text'), content: z.string().min(1) }).strict(),
      z.object({ type: z.literal('file'), file_id: z.string().min(1) }).strict(),
    ]),
    max_iterations: z.number().int().min(1).nullish(),
  })
  .strict(), 'user.define_outcome', 'no outcome grader');

/** Every event a client may send (`POST /v1/sessions/{id}/events`). */
export const eventParams = z.discriminatedUnion('type', [
  userMessageParams,
  z.object({ type: z.literal('user.interrupt'), session_thread_id: notYet(z.string().nullish(), 'session_thread_id', 'no threads: an interrupt stops the whole session') }).strict(),
  z
    .object({
      type: z.literal('user.tool_confirmation'),
      tool_use_id: z.string().min(1),
      result: z.enum(['allow', 'deny']),
      deny_message: z.string().max(10_000).nullish(),
    })
    .strict(),
  z
    .object({
      type: z.literal('user.custom_tool_result'),
      custom_tool_use_id: z.string().min(1),
      content: resultContent.optional(),
      is_error: z.boolean().nullish(),
    })
    .strict(),
  defineOutcomeParams,
  z
    .object({ type: z.literal('user.tool_result'), tool_use_id: z.string().min(1), content: resultContent.optional(), is_error: z.boolean().nullish() })
    .strict(),
  z.object({ type: z.literal('system.message'), content: z.array(textBlock).min(1).max(100) }).strict(),
]);

export const eventSendBody = z.object({ events: z.array(eventParams).min(1).max(100) }).strict();

/** Events a session may be created with. */
export const initialEventParams = z.discriminatedUnion('type', [userMessageParams, defineOutcomeParams]);

/** Stored form: a defined outcome gets its id; max_iterations is always present. */
export function toLoggedInput(e: z.infer<typeof eventParams>, newOutcomeId: () => string): { type: string; [k: string]: unknown } {
  if (e.type === 'user.define_outcome') return { ...e, outcome_id: newOutcomeId(), max_iterations: e.max_iterations ?? null };
  return { ...e };
}
