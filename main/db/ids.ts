import { randomFillSync } from 'node:crypto';
import { monotonicFactory } from 'ulid';

/**
 * ulid's default source asks webcrypto for one byte per character (16 calls per id, about
 * 15 µs an id; a tool round trip makes several). The same cryptographic bytes, drawn from a
 * buffer filled 4 KiB at a time, cost well under a microsecond. A byte / 256 picks one of the
 * 32 characters exactly as ulid's own source does (256 is a multiple of 32).
 */
const pool = new Uint8Array(4096);
let at = pool.length;
function randomFraction(): number {
  if (at === pool.length) {
    randomFillSync(pool);
    at = 0;
  }
  return pool[at++]! / 256;
}

const next = monotonicFactory(randomFraction);

/** Prefixed, sortable ids in the Managed Agents style: `sesn_01…`, `sevt_01…`. */
export const newId = {
  session: () => `sesn_${next()}`,
  event: () => `sevt_${next()}`,
  agent: () => `agent_${next()}`,
  environment: () => `env_${next()}`,
} as const;
