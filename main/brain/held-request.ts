/**
 * A brain's next model request, sent ahead while a hand runs the step's one tool call. The body
 * is built as if the call's result were in the log already, with a hole where its block goes; the
 * model proxy holds it, and the host fills the hole and sends it on as it logs the result
 * (vault/held-requests.ts). The tool's result then reaches the model without waiting for the
 * brain to hear of it and build the request: two process hops and the build leave the path of
 * every tool round trip (issue 8, bench:brain). The brain still decides: at its next step it
 * builds the request as always and uses the held one only if it is the same request (`fits`, or
 * else the same text when serialised); otherwise (or if the host let it go unsent) it cancels it
 * and sends its own.
 */
import type { LoggedEvent } from '../session/types';
import type { ContextOptions, BuiltRequest } from './context';
import { heldBlockText } from './held-fill';
import { partOf } from './transcript';
import { formatHole } from '../vault/held-hole';
import { HeldNotSent, requestBody, type HeldCall, type ModelCaller, type ModelUsage, type StreamHandlers } from './model';
import type { SessionView } from './session-view';
import { READ_SESSION_TOOL } from './agent-config';

/** Room kept in a held request for its result's block (a larger result is sent the usual way). */
export const HOLD_MAX_CHARS = 128 * 1024;

/** A request the proxy holds for one call's result. */
export interface HeldRequest {
  readonly call: HeldCall;
  readonly toolUseId: string;
  /** The step's abort signal it was sent under (an interrupt cancels it). */
  readonly signal: AbortSignal;
  /** The body the host sends once it fills the hole with `result` (undefined: it cannot). */
  bodyWith(result: LoggedEvent): string | undefined;
  /**
   * Whether the view is the one it was built for with only the result added: the reply and then
   * the result folded, nothing else in the transcript, the same options. The request then is
   * the held one filled (ContextBuilder is deterministic: held-request.test.ts compares them byte
   * for byte), so the brain need not serialise it again to compare.
   */
  fits(view: SessionView, opts: ContextOptions): boolean;
}

/** Calls of a reply that the model waits on (a server tool's block is the model's own). */
const CALL_TYPES = new Set(['agent.tool_use', 'agent.custom_tool_use', 'agent.mcp_tool_use']);

/**
 * Sends the request that follows the result of `reply`'s one call to a hand, held, as the call
 * leaves: `reply` is the model's reply as logged or being logged (its calls' appends may not be
 * answered yet). Only when that result is all the next request waits for (no other call, none
 * refused or held for the user) and the request can be known without it (no elision or new
 * start can depend on its size); undefined otherwise.
 */
export function sendAhead(view: SessionView, reply: readonly LoggedEvent[], opts: ContextOptions, model: ModelCaller, signal: AbortSignal): HeldRequest | undefined {
  try {
    return heldAhead(view, reply, opts, model, signal);
  } catch (err) {
    // Only ever a saving: a failure here leaves the step to send its own request.
    console.error(`corral brain: the next request was not sent ahead: ${err instanceof Error ? err.message : String(err)}`);
    return undefined;
  }
}

function heldAhead(view: SessionView, reply: readonly LoggedEvent[], opts: ContextOptions, model: ModelCaller, signal: AbortSignal): HeldRequest | undefined {
  if (!model.hold || signal.aborted) return undefined;
  const calls = reply.filter((e) => CALL_TYPES.has(e.type) && !e.server_block);
  const use = calls[0];
  if (calls.length !== 1 || use!.type !== 'agent.tool_use' || use!.evaluated_permission !== 'allow' || use!.input_dropped || use!.name === READ_SESSION_TOOL.name) return undefined;
  const afterSeq = view.lastSeq;
  // The reply's events the view has not taken in yet (a call's append may be unanswered: no position).
  const rest = reply.filter((e) => e.seq === 0 || e.seq > afterSeq).map((e, i) => ({ ...e, seq: afterSeq + 1 + i }));
  const placeholder = { type: 'agent.tool_result', id: 'held', seq: afterSeq + rest.length + 1, processed_at: '', tool_use_id: use!.id, content: [], is_error: false } as unknown as LoggedEvent;
  const text = heldBlockText(placeholder)!;
  // The transcript parts the view will hold once the reply and the result are folded.
  const parts = view.context.foldedParts + rest.filter((e) => (partOf(e)?.blocks.length ?? 0) > 0).length + 1;
  const body = view.context.whatIf([...rest, placeholder], HOLD_MAX_CHARS - text.length, opts, bodyOf);
  if (body === undefined) return undefined;
  const i = body.lastIndexOf(text);
  if (i < 0) return undefined;
  const prefix = body.slice(0, i);
  const suffix = body.slice(i + text.length);
  const hole = formatHole({ toolUseId: use!.id, afterSeq, at: Buffer.byteLength(prefix), length: Buffer.byteLength(text), maxChars: HOLD_MAX_CHARS });
  return {
    call: model.hold(body, hole, signal),
    toolUseId: use!.id,
    signal,
    bodyWith: (result) => {
      const block = heldBlockText(result);
      return block !== undefined && block.length <= HOLD_MAX_CHARS ? prefix + block + suffix : undefined;
    },
    fits: (now, o) =>
      now.context.foldedParts === parts &&
      o.model === opts.model &&
      o.system === opts.system &&
      o.tools === opts.tools &&
      o.maxTokens === opts.maxTokens &&
      o.contextWindowTokens === opts.contextWindowTokens &&
      o.modelOptions === opts.modelOptions,
  };
}

/** The request body the model client sends for `built` (model.ts). */
export function bodyOf(built: BuiltRequest): string {
  return requestBody(built.params);
}

/**
 * Streams a step's request: the held one if it is exactly this request (and was sent), else the
 * request itself. A held request that is not used is cancelled. "Exactly" is checked by `fits`
 * (cheap), else by serialising this request and comparing it with the held one filled.
 */
export async function streamStep(
  model: ModelCaller,
  built: BuiltRequest,
  ahead: { held: HeldRequest; result: LoggedEvent | undefined; view: SessionView; opts: ContextOptions } | undefined,
  handlers: StreamHandlers,
  signal: AbortSignal,
): Promise<{ stopReason: string; usage: ModelUsage }> {
  if (ahead) {
    const { held, result } = ahead;
    const filled = result?.type === 'agent.tool_result' && result.tool_use_id === held.toolUseId ? held.bodyWith(result) : undefined;
    const same = held.signal === signal && filled !== undefined && (held.fits(ahead.view, ahead.opts) || filled === bodyOf(built));
    if (same) {
      try {
        return await held.call.stream(handlers, signal);
      } catch (err) {
        if (!(err instanceof HeldNotSent)) throw err;
      }
    } else held.call.cancel();
  }
  return model.stream(built.params, handlers, signal);
}
