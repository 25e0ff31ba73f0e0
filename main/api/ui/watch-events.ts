import type { SessionLog } from '../../session/store';
import { SessionNotFoundError, type LoggedEvent } from '../../session/types';
import { readerTurns } from '../reader-turns';
import { sharedEventsOf } from '../shared-event-json';
import type { StreamFlow } from './service';

/** Events per page at most (pages are sized by bytes; this bounds a page of tiny events). */
const PAGE_EVENTS = 1000;

/** What `watchEvents` reads and where it sends it. */
export interface EventWatch {
  log: SessionLog;
  sessionId: string;
  /** The position after which the watch starts (0: the whole log). */
  after: number;
  push(event: LoggedEvent): void;
  /**
   * Given by a transport that sends bytes: a page's events are handed to it as their stored
   * JSON (the UTF-8 of `JSON.stringify(event)`, in parts), never parsed and stringified again;
   * large ones are shared with the host's other readers (sharedEventsOf).
   */
  pushJson?(json: readonly Buffer[]): void;
  flow?: StreamFlow;
  /** Bytes of events read and pushed at a time (READER_PAGE_BYTES). */
  pageBytes: number;
}

/**
 * A session's events after a position, then each new one as it is committed, without gap or
 * double. The log is the buffer: a watch that is behind reads on from the last event it pushed,
 * a page (`pageBytes`) at a time; one that is caught up, with room in its transport, pushes an
 * appended event as it is committed. Before each page, the first included, the host's other
 * work runs, the transport's buffer must have room (`flow.drained`), and the page takes its
 * turn with the host's other readers (`readerTurns`); a page stops early when the buffer fills
 * (`flow.congested`) and the rest stays in the log. So a client that does not read holds at
 * most its transport's mark plus one event, however long the session or the time it is away.
 * Returns the function that stops it.
 *
 * An appended event is pushed once the code that appended it has run to its end (a microtask),
 * not inside the append: a brain's tool call is dispatched, and its result handed to the brain,
 * before the UI's copy is serialised and written (each a few hundred microseconds on the host's
 * loop, on the path of every tool round trip while someone watches).
 */
export function watchEvents(w: EventWatch): () => void {
  const { log, sessionId, push, flow } = w;
  let last = w.after;
  let stopped = false;
  let appended = false;
  let wake: (() => void) | undefined;
  /** Appended events waiting for the appending code to finish (in order, each after the last). */
  let queued: LoggedEvent[] = [];
  const pushQueued = () => {
    const events = queued;
    queued = [];
    for (const e of events) {
      if (stopped) return;
      // Sent by a page meanwhile, or the transport filled: the rest is read from the log.
      if (e.seq !== last + 1 || flow?.congested?.()) {
        appended = true;
        return void wake?.();
      }
      last = e.seq;
      push(e);
    }
  };
  const unsubscribe = log.subscribe(sessionId, (e) => {
    // Caught up, with room in the transport: the new event goes out as soon as the append's caller is done.
    if (wake && e.seq === (queued.length ? queued[queued.length - 1]!.seq : last) + 1 && !flow?.congested?.()) {
      if (queued.push(e) === 1) queueMicrotask(pushQueued);
      return;
    }
    appended = true;
    wake?.();
  });
  const stop = () => {
    stopped = true;
    unsubscribe();
    wake?.();
  };

  /** The next page, each event with how it is sent, and whether more may follow. */
  const readPage = (): { page: { seq: number; send: () => void }[]; more: boolean } => {
    const slice = { after: last, limit: PAGE_EVENTS, maxBytes: w.pageBytes };
    const { pushJson } = w;
    if (pushJson) {
      const page = sharedEventsOf(log).page(sessionId, slice);
      // Read as JSON, whether this was the last page is known by reading on (an empty page ends it).
      return { page: page.map((e) => ({ seq: e.seq, send: () => pushJson(e.json) })), more: page.length > 0 };
    }
    const { events, more } = log.getEventPage(sessionId, slice);
    return { page: events.map((e) => ({ seq: e.seq, send: () => push(e) })), more };
  };

  /** Pushes the next page; true if there may be more to read now. */
  const sendPage = (): boolean => {
    if (stopped) return false; // stopped while the page waited for its turn
    appended = false;
    const { page, more } = readPage();
    for (const e of page) {
      last = e.seq;
      e.send();
      if (stopped) return false;
      if (flow?.congested?.()) return e !== page[page.length - 1] || more;
    }
    return more;
  };

  const run = async () => {
    // Even the first page waits for the host's other work: a client's watches come in one
    // message burst, and reading all their first pages (4 MiB events each) in one go stalled the
    // host for most of a second.
    let more = true;
    while (!stopped) {
      if (!more && !appended) {
        await new Promise<void>((resolve) => (wake = resolve));
        wake = undefined;
        if (stopped) return;
      }
      await new Promise((r) => setImmediate(r));
      await flow?.drained?.();
      if (stopped) return;
      more = await readerTurns.run(sendPage);
    }
  };
  run().catch((err) => {
    // The session was deleted: nothing more to send.
    if (!(err instanceof SessionNotFoundError)) console.error('corral: event watch failed:', err);
    stop();
  });
  return stop;
}
