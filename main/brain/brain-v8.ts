/**
 * V8 flags every brain process starts with (forked directly or from the pool).
 *
 * Why: a brain allocates a few hundred kB per tool round trip (the whole message history is
 * serialised into each request, the streamed answer parsed), and V8's young generation starts at
 * 1 MB per semi-space: a scavenge (0.2–2 ms, in the round trip that triggers it) came every ~8
 * round trips. Measured with bench:brain and --trace-gc in the brain, one session: 30 round trips
 * 5 scavenges (default) / 2 (4 MB) / 0 (8 MB); 300 round trips 37 / 22 / 11.
 *
 * Memory: the brain's committed heap after 300 round trips was 15 MB with V8's default and 23 MB
 * with this flag (4 MB gave 23 MB too: V8 grew it), so about 8 MB more per brain process; the
 * maximum semi-space size (V8's default, 16 MB on 64-bit) and the old-generation limits are
 * unchanged, so a brain's worst case is not raised.
 */
export const BRAIN_V8_FLAGS: readonly string[] = ['--min-semi-space-size=8'];

/** The node flags for a brain: the V8 flags first, then the caller's (a later flag wins). */
export function brainExecArgv(extra: readonly string[] = []): string[] {
  return [...BRAIN_V8_FLAGS, ...extra];
}
