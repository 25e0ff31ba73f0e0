import type { HandRegistry } from '../hands/registry';
import type { SessionLog } from '../session/store';
import type { BrainPrime, TurnPrime } from './ipc-protocol';

/** A bound brain's first page of the log, sent with its bind: a new session's whole log. */
const PRIME_EVENTS = 1000;
const PRIME_BYTES = 1024 * 1024;

/**
 * A fresh brain's first reads (the log's first page, the agent, the hands), read in one turn of
 * the host's loop and sent with its bind, so its first model request waits on no round trip.
 * Undefined when they cannot be read: the brain then asks, as a forked one does.
 */
export function brainPrime(log: SessionLog, hands: Pick<HandRegistry, 'list'>, sessionId: string): BrainPrime | undefined {
  try {
    const page = log.getEventPage(sessionId, { from: 1, limit: PRIME_EVENTS, maxBytes: PRIME_BYTES });
    const turn = turnPrime(log, hands, sessionId);
    return turn && { page, ...turn };
  } catch {
    return undefined;
  }
}

/**
 * The agent and the hands for a brain woken after its turn by new input: sent with that input,
 * so the run it starts asks for neither (a round trip before the next turn's request).
 * Undefined when they cannot be read: the brain then asks.
 */
export function turnPrime(log: SessionLog, hands: Pick<HandRegistry, 'list'>, sessionId: string): TurnPrime | undefined {
  try {
    return { agent: log.getSession(sessionId).record.agent, hands: hands.list(sessionId) };
  } catch {
    return undefined;
  }
}
