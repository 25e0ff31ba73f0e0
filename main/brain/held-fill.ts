/**
 * What a held request's hole is filled with: used by the brain that sends a request ahead
 * (held-request.ts) and by the host that fills it (vault/held-requests.ts, given this by host.ts),
 * so both render a tool's result exactly as the brain's own request would carry it.
 */
import type { LoggedEvent } from '../session/types';
import { CACHE_MARK, partOf } from './transcript';

/**
 * Event types that put something into a user turn of the model's transcript (the user-role cases
 * of `partOf`; a server tool's result, an agent.tool_result too, is the assistant's, but counting
 * it here only lets a held request go unsent).
 */
export const USER_TURN_TYPES: ReadonlySet<string> = new Set([
  'user.message',
  'system.message',
  'agent.tool_result',
  'agent.mcp_tool_result',
  'user.tool_result',
  'user.custom_tool_result',
]);

/**
 * A hand tool's result as the next request carries it: the one block of a new user turn, which
 * is the newest user turn and so carries a cache breakpoint (ContextBuilder.build). Undefined for
 * anything else.
 */
export function heldBlockText(e: LoggedEvent): string | undefined {
  if (e.type !== 'agent.tool_result' || e.server_block) return undefined;
  const block = partOf(e)?.blocks[0];
  return block && JSON.stringify({ ...block, cache_control: CACHE_MARK });
}
