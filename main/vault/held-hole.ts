/**
 * How a brain names the hole of a request it sends ahead (brain/held-request.ts) for the model
 * proxy to hold: a request header, read here and checked (a brain runs model-driven code).
 */

/** The request header naming a held request's hole (and, on the proxy's answer, `dropped`). */
export const HOLD_HEADER = 'x-corral-hold';

/** Where a held request's hole is and what may fill it. */
export interface HoleSpec {
  /** The tool call whose `agent.tool_result` fills the hole. */
  toolUseId: string;
  /** The log position the request was built through: the result must be the next user-turn event after it. */
  afterSeq: number;
  /** Byte offset and length of the placeholder in the body. */
  at: number;
  length: number;
  /** The most characters the result's block may have (the request was sized for that). */
  maxChars: number;
}

export function formatHole(h: HoleSpec): string {
  return `${h.toolUseId}; after=${h.afterSeq}; at=${h.at}; length=${h.length}; max=${h.maxChars}`;
}

/** Reads a hole header (a brain's: checked, since a brain runs model-driven code); undefined if malformed. */
export function parseHole(value: string, bodyBytes: number): HoleSpec | undefined {
  const m = /^([A-Za-z0-9_-]{1,128}); after=(\d{1,15}); at=(\d{1,12}); length=(\d{1,12}); max=(\d{1,12})$/.exec(value);
  if (!m) return undefined;
  const [afterSeq, at, length, maxChars] = [m[2], m[3], m[4], m[5]].map(Number) as [number, number, number, number];
  if (at + length > bodyBytes) return undefined;
  return { toolUseId: m[1]!, afterSeq, at, length, maxChars };
}
