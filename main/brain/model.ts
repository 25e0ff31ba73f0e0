import Anthropic from '@anthropic-ai/sdk';
import type { BuiltRequest } from './context';

/** A content block the model finished. */
export type FinishedBlock =
  | { type: 'text'; text: string }
  | { type: 'thinking'; thinking: string; signature: string }
  | { type: 'redacted_thinking'; data: string }
  | { type: 'tool_use'; id: string; name: string; input: Record<string, unknown> };

/** Token usage of one request, in the shape of `span.model_request_end.model_usage`. */
export interface ModelUsage {
  input_tokens: number;
  output_tokens: number;
  cache_read_input_tokens: number;
  cache_creation_input_tokens: number;
}

/** Why a request failed, and whether trying again could help. */
export interface ModelFailure {
  errorType: 'model_rate_limited_error' | 'model_overloaded_error' | 'model_request_failed_error';
  message: string;
  retryable: boolean;
  /** The server's `retry-after` (or `retry-after-ms`), when it sent one. */
  retryAfterMs?: number;
  status?: number;
  aborted?: boolean;
}

export class ModelError extends Error {
  constructor(readonly failure: ModelFailure) {
    super(failure.message);
  }
}

/** Callbacks of a streaming request. */
export interface StreamHandlers {
  /** Called, in order and awaited, as each content block completes. */
  onBlock(block: FinishedBlock, index: number): Promise<void>;
  /** A content block began (its type as the API names it: text, thinking, tool_use, …). */
  onBlockStart?(index: number, type: string): void;
  /** Text (or thinking) as it is written (not logged per delta). */
  onTextDelta?(index: number, text: string): void;
}

/** Something that runs one streaming Messages request. */
export interface ModelCaller {
  stream(params: BuiltRequest['params'], handlers: StreamHandlers, signal: AbortSignal): Promise<{ stopReason: string; usage: ModelUsage }>;
}

/** The real caller: the Anthropic SDK, no SDK-level retries (the harness retries and logs it). */
export function createAnthropicCaller(opts: { apiKey?: string; baseURL?: string; timeoutMs?: number } = {}): ModelCaller {
  const apiKey = opts.apiKey ?? process.env.ANTHROPIC_API_KEY;
  if (!apiKey) {
    // No point sending a request that cannot authenticate: say what to do instead.
    return {
      stream: async () => {
        throw new ModelError({ errorType: 'model_request_failed_error', message: 'no model API key: set ANTHROPIC_API_KEY for Corral', retryable: false });
      },
    };
  }
  const client = new Anthropic({
    apiKey,
    baseURL: opts.baseURL ?? process.env.ANTHROPIC_BASE_URL ?? undefined,
    maxRetries: 0,
    timeout: opts.timeoutMs ?? 10 * 60_000,
  });
  return {
    async stream(params, handlers, signal) {
      const usage: ModelUsage = { input_tokens: 0, output_tokens: 0, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 };
      let stopReason = 'end_turn';
      const open = new Map<number, { block: Record<string, unknown>; json: string }>();
      try {
        const stream = await client.messages.create({ ...(params as unknown as Anthropic.MessageCreateParamsNonStreaming), stream: true }, { signal });
        for await (const ev of stream) {
          switch (ev.type) {
            case 'message_start': {
              const u = ev.message.usage;
              usage.input_tokens = u.input_tokens ?? 0;
              usage.cache_read_input_tokens = u.cache_read_input_tokens ?? 0;
              usage.cache_creation_input_tokens = u.cache_creation_input_tokens ?? 0;
              usage.output_tokens = u.output_tokens ?? 0;
              break;
            }
            case 'content_block_start':
              open.set(ev.index, { block: { ...ev.content_block } as Record<string, unknown>, json: '' });
              handlers.onBlockStart?.(ev.index, ev.content_block.type);
              break;
            case 'content_block_delta': {
              const cur = open.get(ev.index);
              if (!cur) break;
              const d = ev.delta as { type: string; text?: string; thinking?: string; signature?: string; partial_json?: string };
              if (d.type === 'text_delta') {
                cur.block.text = String(cur.block.text ?? '') + (d.text ?? '');
                handlers.onTextDelta?.(ev.index, d.text ?? '');
              } else if (d.type === 'thinking_delta') {
                cur.block.thinking = String(cur.block.thinking ?? '') + (d.thinking ?? '');
                handlers.onTextDelta?.(ev.index, d.thinking ?? '');
              }
              else if (d.type === 'signature_delta') cur.block.signature = String(cur.block.signature ?? '') + (d.signature ?? '');
              else if (d.type === 'input_json_delta') cur.json += d.partial_json ?? '';
              break;
            }
            case 'content_block_stop': {
              const cur = open.get(ev.index);
              if (!cur) break;
              open.delete(ev.index);
              await handlers.onBlock(finish(cur.block, cur.json), ev.index);
              break;
            }
            case 'message_delta':
              if (ev.delta.stop_reason) stopReason = ev.delta.stop_reason;
              if (ev.usage?.output_tokens != null) usage.output_tokens = ev.usage.output_tokens;
              break;
          }
        }
      } catch (err) {
        throw new ModelError(classify(err, signal));
      }
      if (signal.aborted) throw new ModelError({ errorType: 'model_request_failed_error', message: 'interrupted', retryable: false, aborted: true });
      return { stopReason, usage };
    },
  };
}

function finish(block: Record<string, unknown>, json: string): FinishedBlock {
  switch (block.type) {
    case 'text':
      return { type: 'text', text: String(block.text ?? '') };
    case 'thinking':
      return { type: 'thinking', thinking: String(block.thinking ?? ''), signature: String(block.signature ?? '') };
    case 'redacted_thinking':
      return { type: 'redacted_thinking', data: String(block.data ?? '') };
    case 'tool_use':
    case 'server_tool_use': {
      let input: Record<string, unknown> = {};
      try {
        input = json.trim() ? (JSON.parse(json) as Record<string, unknown>) : ((block.input as Record<string, unknown>) ?? {});
      } catch {
        input = { _unparsed_input: json };
      }
      return { type: 'tool_use', id: String(block.id), name: String(block.name), input };
    }
    default:
      return { type: 'text', text: '' };
  }
}

function headerMs(headers: Headers | undefined): number | undefined {
  const ms = headers?.get('retry-after-ms');
  if (ms && Number.isFinite(Number(ms))) return Number(ms);
  const s = headers?.get('retry-after');
  if (s && Number.isFinite(Number(s))) return Number(s) * 1000;
  if (s) {
    const at = Date.parse(s);
    if (!Number.isNaN(at)) return Math.max(0, at - Date.now());
  }
  return undefined;
}

/** Maps an SDK error to the Managed Agents error types and a retry decision. */
export function classify(err: unknown, signal?: AbortSignal): ModelFailure {
  if (signal?.aborted || err instanceof Anthropic.APIUserAbortError) {
    return { errorType: 'model_request_failed_error', message: 'interrupted', retryable: false, aborted: true };
  }
  if (err instanceof Anthropic.APIError && !(err instanceof Anthropic.APIConnectionError)) {
    const status = err.status;
    const type = (err.error as { error?: { type?: string } } | undefined)?.error?.type ?? (err as { type?: string }).type;
    const message = `${status ? `${status} ` : ''}${err.message}`;
    const retryAfterMs = headerMs(err.headers as Headers | undefined);
    if (status === 429 || type === 'rate_limit_error') return { errorType: 'model_rate_limited_error', message, retryable: true, retryAfterMs, status };
    if (status === 529 || type === 'overloaded_error') return { errorType: 'model_overloaded_error', message, retryable: true, retryAfterMs, status };
    if (status === undefined || status >= 500 || status === 408 || status === 409) {
      return { errorType: 'model_request_failed_error', message, retryable: true, retryAfterMs, status };
    }
    return { errorType: 'model_request_failed_error', message, retryable: false, status };
  }
  // Connection refused, reset, or a stream cut mid-way.
  const message = err instanceof Error ? `connection to the model failed: ${err.message}` : 'connection to the model failed';
  return { errorType: 'model_request_failed_error', message, retryable: true };
}
