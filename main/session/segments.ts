/**
 * A fork shares its parent's first `fork_seq` events without copying them. Its log is a chain
 * of segments: positions lo..hi of some stored session's rows.
 */
export interface Segment {
  sessionId: string;
  lo: number;
  hi: number;
}

/** Minimal session lookup the chain walk needs. */
export type ParentLookup = (id: string) => { parent_id: string | null; fork_seq: number | null } | undefined;

/** The segments of a session's log, oldest first. */
export function segmentsOf(sessionId: string, lookup: ParentLookup): Segment[] {
  const chain: Segment[] = [];
  let id: string | null = sessionId;
  let hi = Number.MAX_SAFE_INTEGER;
  const seen = new Set<string>();
  while (id) {
    if (seen.has(id)) throw new Error(`fork chain of ${sessionId} has a cycle at ${id}`);
    seen.add(id);
    const row = lookup(id);
    if (!row) throw new Error(`fork chain of ${sessionId} names missing session ${id}`);
    const lo = row.fork_seq !== null ? row.fork_seq + 1 : 1;
    if (lo <= hi) chain.push({ sessionId: id, lo, hi });
    hi = Math.min(hi, lo - 1);
    id = row.parent_id;
  }
  return chain.reverse();
}
