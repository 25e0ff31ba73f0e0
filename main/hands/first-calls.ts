/**
 * Pooled hands' first tool calls in flight, in this process: the moment a warm pool of hands is
 * for. Work that can wait a moment waits while one is in flight: a brain started ahead
 * (brain-pool.ts), whose fork holds the host's event loop until the child has exec'd (23–163 ms
 * measured during bench:ttft on this 2-core machine) and whose Node start-up then takes a core.
 * Each first call holds for at most MAX_HOLD_MS (a first command may run for minutes).
 */
export const MAX_HOLD_MS = 300;

let inFlight = 0;
const listeners = new Set<(busy: boolean) => void>();

function tell(busy: boolean): void {
  for (const l of [...listeners]) {
    try {
      l(busy);
    } catch {
      // A listener's failure is its own.
    }
  }
}

/** A pooled hand's first call starts; call the result when it ends (again: no-op). Held for at most `maxMs`. */
export function firstCallStarted(maxMs = MAX_HOLD_MS): () => void {
  inFlight += 1;
  if (inFlight === 1) tell(true);
  let done = false;
  const end = () => {
    if (done) return;
    done = true;
    clearTimeout(timer);
    inFlight -= 1;
    if (inFlight === 0) tell(false);
  };
  const timer = setTimeout(end, maxMs);
  timer.unref();
  return end;
}

/** Whether a pooled hand's first call is in flight now. */
export const firstCallsInFlight = (): boolean => inFlight > 0;

/** Told true when the first of such calls starts, false when the last ends. */
export function onFirstCalls(listener: (busy: boolean) => void): () => void {
  listeners.add(listener);
  return () => void listeners.delete(listener);
}
