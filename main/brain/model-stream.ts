import type { FinishedBlock, ModelFailure, ModelUsage, StreamHandlers } from './model';
import { isServerResultType } from './server-tools';

/** One server-sent event of a Messages stream, its data parsed. */
export interface StreamEvent {
  type: string;
  [k: string]: unknown;
}

/**
 * Splits a text/event-stream body into events as chunks arrive (frames end with a blank line;
 * `data:` lines are joined). Comments, `event:` names and ids are not needed: the data carries
 * its type.
 */
export class SseParser {
  private buffer = '';

  constructor(private readonly onEvent: (data: string) => void) {}

  feed(chunk: string): void {
    this.buffer += chunk;
    for (;;) {
      const lf = this.buffer.indexOf('\n\n');
      const crlf = this.buffer.indexOf('\r\n\r\n');
      const end = lf < 0 ? crlf : crlf < 0 ? lf : Math.min(lf, crlf);
      if (end < 0) return;
      const frame = this.buffer.slice(0, end);
      this.buffer = this.buffer.slice(end + (end === crlf ? 4 : 2));
      const data = frame
        .split(/\r?\n/)
        .filter((l) => l.startsWith('data:'))
        .map((l) => l.slice(l.startsWith('data: ') ? 6 : 5))
        .join('\n');
      if (data) this.onEvent(data);
    }
  }
}

/** The failure an `error` event in the stream stands for (e.g. overloaded mid-stream). */
export function streamErrorFailure(e: StreamEvent): ModelFailure {
  const error = (e.error ?? {}) as { type?: string; message?: string };
  const message = `${error.type ?? 'error'}: ${error.message ?? 'the stream reported an error'}`;
  if (error.type === 'overloaded_error') return { errorType: 'model_overloaded_error', message, retryable: true };
  if (error.type === 'rate_limit_error') return { errorType: 'model_rate_limited_error', message, retryable: true };
  return { errorType: 'model_request_failed_error', message, retryable: true };
}

/**
 * Folds a Messages stream's events into finished blocks (handed to `onBlock` in order, awaited),
 * live text, the stop reason and the usage.
 */
export class MessageAssembler {
  readonly usage: ModelUsage = { input_tokens: 0, output_tokens: 0, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 };
  stopReason = 'end_turn';
  /** message_stop arrived: the answer is whole. */
  complete = false;
  private readonly open = new Map<number, { block: Record<string, unknown>; json: string }>();

  constructor(private readonly handlers: StreamHandlers) {}

  /** Takes the next event; throws a StreamEvent of type `error` back as is (the caller maps it). */
  async take(ev: StreamEvent): Promise<void> {
    switch (ev.type) {
      case 'message_start': {
        const u = ((ev.message as { usage?: Partial<ModelUsage> } | undefined)?.usage ?? {}) as Partial<ModelUsage>;
        this.usage.input_tokens = u.input_tokens ?? 0;
        this.usage.cache_read_input_tokens = u.cache_read_input_tokens ?? 0;
        this.usage.cache_creation_input_tokens = u.cache_creation_input_tokens ?? 0;
        this.usage.output_tokens = u.output_tokens ?? 0;
        return;
      }
      case 'content_block_start': {
        const index = Number(ev.index);
        const block = { ...(ev.content_block as Record<string, unknown>) };
        this.open.set(index, { block, json: '' });
        this.handlers.onBlockStart?.(index, String(block.type));
        return;
      }
      case 'content_block_delta': {
        const index = Number(ev.index);
        const cur = this.open.get(index);
        if (!cur) return;
        const d = ev.delta as { type: string; text?: string; thinking?: string; signature?: string; partial_json?: string };
        if (d.type === 'text_delta') {
          cur.block.text = String(cur.block.text ?? '') + (d.text ?? '');
          this.handlers.onTextDelta?.(index, d.text ?? '');
        } else if (d.type === 'thinking_delta') {
          cur.block.thinking = String(cur.block.thinking ?? '') + (d.thinking ?? '');
          this.handlers.onTextDelta?.(index, d.thinking ?? '');
        } else if (d.type === 'signature_delta') cur.block.signature = String(cur.block.signature ?? '') + (d.signature ?? '');
        else if (d.type === 'input_json_delta') cur.json += d.partial_json ?? '';
        return;
      }
      case 'content_block_stop': {
        const index = Number(ev.index);
        const cur = this.open.get(index);
        if (!cur) return;
        this.open.delete(index);
        await this.handlers.onBlock(finish(cur.block, cur.json), index);
        return;
      }
      case 'message_delta': {
        const delta = ev.delta as { stop_reason?: string | null } | undefined;
        const usage = ev.usage as { output_tokens?: number | null } | undefined;
        if (delta?.stop_reason) this.stopReason = delta.stop_reason;
        if (usage?.output_tokens != null) this.usage.output_tokens = usage.output_tokens;
        return;
      }
      case 'message_stop':
        this.complete = true;
        return;
    }
  }
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
      // A server tool's call is the provider's to run: kept whole (its fields in their order) to be sent back as it came.
      if (block.type === 'server_tool_use') return { type: 'server_tool_use', block: { ...block, input } };
      return { type: 'tool_use', id: String(block.id), name: String(block.name), input };
    }
    default:
      // web_search_tool_result / web_fetch_tool_result arrive whole in content_block_start.
      if (isServerResultType(block.type)) return { type: 'server_tool_result', block };
      return { type: 'text', text: '' };
  }
}
