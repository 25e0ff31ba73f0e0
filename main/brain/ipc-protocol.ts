import type { EventSlice, LoggedEvent } from '../session/types';
import type { HandInfo } from '../hands/registry';
import type { BrainEventInput } from './brain-event-schema';
import type { LiveDelta } from './live-text';
import type { McpToolDefinition } from '../mcp/names';

/**
 * Requests a brain process makes of its host, by operation: the one map both ends are typed
 * from (the brain's `request()`, the host's handlers and its zod schemas in ipc-schema.ts).
 */
export interface BrainRequests {
  /** A slice of the session's log (the brain's first read, and the model's read_session_events). */
  readEvents: { args: { slice: EventSlice }; result: LoggedEvent[] };
  /** A page of a slice, saying whether the slice goes on (the host bounds a page by bytes too). */
  readPage: { args: { slice: EventSlice }; result: { events: LoggedEvent[]; more: boolean } };
  /** Appends atomically; a repeated key returns what the first append made. */
  emit: { args: { events: BrainEventInput[]; key: string }; result: LoggedEvent[] };
  /**
   * Runs the tool call `toolUseId` on one of the session's hands and records its outcome as the
   * call's `agent.tool_result` (so an outcome is never lost with its brain); answers with it.
   */
  execute: { args: { name: string; input: Record<string, unknown>; hand?: string; toolUseId: string }; result: LoggedEvent };
  /** The hands the session holds. */
  hands: { args: Record<string, never>; result: HandInfo[] };
  /** The session's agent snapshot. */
  agent: { args: Record<string, never>; result: Record<string, unknown> | undefined };
  /** The enabled tools of the session's MCP servers (the host connects to them, with the vault's tokens). */
  mcpTools: { args: Record<string, never>; result: McpToolDefinition[] };
  /**
   * Runs the MCP call `toolUseId` (an `agent.mcp_tool_use`) through the host's client and records
   * its `agent.mcp_tool_result`; answers with it.
   */
  mcpCall: { args: { server: string; tool: string; input: Record<string, unknown>; toolUseId: string }; result: LoggedEvent };
}
export type BrainOp = keyof BrainRequests;

/** A request of one operation. */
export type BrainRequest<Op extends BrainOp = BrainOp> = { [O in Op]: { t: 'req'; id: number; op: O; args: BrainRequests[O]['args'] } }[Op];

/** Brain → host messages. */
export type BrainToHost =
  | BrainRequest
  /** Stop the request with this id (the model was interrupted while a tool ran). */
  | { t: 'cancel'; id: number }
  /** Live text, never logged. */
  | { t: 'delta'; delta: LiveDelta }
  /**
   * The brain has nothing to do, having seen the log up to `through`. It may exit after a
   * while; the host starts a fresh one then only if input arrived after `through`.
   */
  | { t: 'idle'; through: number }
  /** Several of the above sent together, handled in order. */
  | { t: 'batch'; messages: Exclude<BrainToHost, { t: 'batch' }>[] };

/**
 * What a pooled brain sends, before any bind, once its code is loaded and warmed up (brain-pool.ts
 * prefers such a brain, and keeps it from the supervisor, which never sees a message of this kind).
 */
export const POOLED_READY = { t: 'pooled-ready' } as const;

/** Host → brain messages. */
export type HostToBrain =
  | { t: 'res'; id: number; ok: true; value: unknown }
  | { t: 'res'; id: number; ok: false; error: string }
  /**
   * Events appended to the session while the brain runs, in log order. The brain's own appends
   * come back in the emit reply instead. Input that wakes a brain lingering after its turn comes
   * with the agent and the hands as they are now (`turn`), which its run would ask for first.
   */
  | { t: 'events'; events: LoggedEvent[]; turn?: TurnPrime }
  /**
   * Binds a pooled brain (started without a session) to its session: the first message it gets.
   * `env` holds the session's model capability (the proxy's URL and a token revoked when the
   * brain exits), never a key.
   */
  | { t: 'bind'; sessionId: string; env: Record<string, string>; prime?: BrainPrime }
  /**
   * Several of the above (never a bind) sent together, to be handled in order: a batch's replies,
   * and replies that waited for the call a batch started (supervisor.ts, onBatch).
   */
  | { t: 'batch'; messages: Exclude<HostToBrain, { t: 'batch' } | { t: 'bind' }>[] };

/**
 * What a fresh brain reads first, sent with its bind so it need not ask (each request is a round
 * trip through two busy event loops): the log's first page, the agent, the hands — all read in
 * the same turn of the host's loop, so they agree, and every event after them follows as `events`.
 */
export interface BrainPrime extends TurnPrime {
  /** Events from position 1 on; `more`: the log goes on past them (the brain reads the rest). */
  page: { events: LoggedEvent[]; more: boolean };
}

/** The session's agent and hands, read in one turn of the host's loop (the `agent` and `hands` requests' answers). */
export interface TurnPrime {
  agent: unknown;
  hands: unknown;
}
