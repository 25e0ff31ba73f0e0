import type { SessionLog } from '../session/store';
import type { EventHead, EventJson } from '../session/types';

/** Events at least this big are shared between readers; smaller ones are read in runs. */
const SHARED_FROM_BYTES = 64 * 1024;

/** A byte-sized page of events after a position. */
export interface PageRequest {
  after: number;
  /** Events at most. */
  limit: number;
  /** See EventSlice.maxBytes. */
  maxBytes: number;
}

/**
 * Pages of a session's events as JSON (EventJson), with each large event held once however many
 * readers send it: a page is planned from the events' heads (sizes, not contents), a large
 * event is taken from the copy another reader holds when there is one, and read from the log
 * otherwise. Copies are held weakly: one lives while some reader keeps it. So a hundred
 * readers of a session with 4 MiB events hold 4 MiB per event, not 400. One per log
 * (`sharedEventsOf`): the SSE streams and the UI's watches share it.
 */
export class SharedEventJson {
  private readonly copies = new Map<string, WeakRef<EventJson>>();
  private readonly forget = new FinalizationRegistry<string>((id) => {
    if (this.copies.get(id)?.deref() === undefined) this.copies.delete(id);
  });

  constructor(private readonly log: SessionLog) {}

  /** The page of `sessionId`'s events after `req.after` (empty at the end of the log). */
  page(sessionId: string, req: PageRequest): EventJson[] {
    const heads = this.log.getEventHeads(sessionId, req);
    const out: EventJson[] = [];
    let run: EventHead[] = [];
    const readRun = () => {
      if (run.length === 0) return;
      out.push(...this.log.getEventJson(sessionId, { from: run[0]!.seq, to: run[run.length - 1]!.seq, limit: run.length }));
      run = [];
    };
    for (const head of heads) {
      if (head.bytes < SHARED_FROM_BYTES) {
        run.push(head);
        continue;
      }
      readRun();
      out.push(this.large(sessionId, head));
    }
    readRun();
    return out;
  }

  private large(sessionId: string, head: EventHead): EventJson {
    // An event id names one event in the whole file; a fork shares it, at the same position.
    const held = this.copies.get(head.id)?.deref();
    if (held) return held;
    const [read] = this.log.getEventJson(sessionId, { from: head.seq, to: head.seq, limit: 1 });
    if (!read) throw new Error(`event ${head.seq} of session ${sessionId} vanished between two reads`);
    this.copies.set(head.id, new WeakRef(read));
    this.forget.register(read, head.id);
    return read;
  }
}

const perLog = new WeakMap<SessionLog, SharedEventJson>();

/** The log's one SharedEventJson, made on first use. */
export function sharedEventsOf(log: SessionLog): SharedEventJson {
  let shared = perLog.get(log);
  if (!shared) perLog.set(log, (shared = new SharedEventJson(log)));
  return shared;
}
