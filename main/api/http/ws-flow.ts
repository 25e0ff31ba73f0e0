import type { StreamFlow } from '../ui/service';
import { STALL_MS } from '../reader-limits';

/** Close code for a UI socket whose client stopped reading (it reconnects and resumes). */
export const CLOSE_TOO_SLOW = 4408;

/** Below this many unsent bytes the socket takes the next page of a stream. */
const SEND_MARK = 1024 * 1024;
/**
 * More unsent bytes than this and the client is cut off at once. Above SEND_MARK only small
 * items and call replies are sent (a reply is at most a few MiB), so a client that reaches
 * this is sending calls without reading the replies.
 */
const SEND_MAX = 32 * 1024 * 1024;
/** How often a socket above its mark is checked for progress. */
const CHECK_MS = 250;

/** The part of a `ws` WebSocket the flow reads. */
export interface SendBuffer {
  /** Bytes sent by the server and not yet taken by the kernel. */
  readonly bufferedAmount: number;
}

/** Flow control of one UI socket, as its streams see it, plus the hooks the socket calls. */
export interface SocketFlow extends StreamFlow {
  /** Call after each message sent: checks the socket's bounds. */
  sent(): void;
  /** Stops the flow's timers; waiting streams are released (they find themselves stopped). */
  close(): void;
}

/** Options of `socketFlow`. */
export interface SocketFlowOptions {
  stallMs?: number;
  /** Called once when the client is too slow; the socket should be closed. */
  onTooSlow(reason: string): void;
}

/**
 * Bounds what a UI socket holds for its client. Streams send a page only when the socket's
 * unsent bytes are below SEND_MARK, one stream at a time (`drained`), and stop mid-page when it
 * fills (`congested`). A client whose unsent bytes stay above the mark without going down for
 * `stallMs`, or pass SEND_MAX, is reported too slow.
 */
export function socketFlow(socket: SendBuffer, opts: SocketFlowOptions): SocketFlow {
  const stallMs = opts.stallMs ?? STALL_MS;
  const waiters: (() => void)[] = [];
  let pumping = false;
  let closed = false;
  let watchdog: NodeJS.Timeout | undefined;
  /** When the unsent bytes last went down (or were below the mark), and what they were then. */
  let progressAt = Date.now();
  let lastSeen = 0;

  const buffered = () => socket.bufferedAmount;

  const tooSlow = (reason: string) => {
    if (closed) return;
    flow.close();
    opts.onTooSlow(reason);
  };

  /** Checks the bounds; true while the socket is above its mark (and still open). */
  const check = (): boolean => {
    const now = buffered();
    if (now > SEND_MAX) {
      tooSlow(`${now} bytes unread, over the limit of ${SEND_MAX}`);
      return false;
    }
    // Progress: below the mark, just crossed it, or less unsent than at the last look.
    if (now < SEND_MARK || lastSeen < SEND_MARK || now < lastSeen) progressAt = Date.now();
    lastSeen = now;
    if (now < SEND_MARK) return false;
    if (Date.now() - progressAt >= stallMs) {
      tooSlow(`${now} bytes unread and none taken for ${stallMs} ms`);
      return false;
    }
    return true;
  };

  const watch = () => {
    if (watchdog || closed) return;
    watchdog = setInterval(() => {
      if (!check()) {
        clearInterval(watchdog);
        watchdog = undefined;
      }
    }, Math.min(CHECK_MS, stallMs));
  };

  // One waiter is let through per turn of the event loop, so the page it sends is counted
  // before the next one is let through.
  const pump = () => {
    if (pumping) return;
    pumping = true;
    setImmediate(() => {
      pumping = false;
      if (closed) return waiters.splice(0).forEach((w) => w());
      if (waiters.length === 0) return;
      if (buffered() < SEND_MARK) {
        waiters.shift()!();
        if (waiters.length > 0) pump();
      } else {
        watch();
        setTimeout(pump, 10);
      }
    });
  };

  const flow: SocketFlow = {
    drained() {
      return new Promise<void>((resolve) => {
        waiters.push(resolve);
        pump();
      });
    },
    congested: () => buffered() >= SEND_MARK,
    sent() {
      if (check()) watch();
    },
    close() {
      if (closed) return;
      closed = true;
      clearInterval(watchdog);
      watchdog = undefined;
      waiters.splice(0).forEach((w) => w());
    },
  };
  return flow;
}
