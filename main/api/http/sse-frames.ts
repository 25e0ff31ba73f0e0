import type { EventJson } from '../../session/types';

/**
 * The SSE frame of a logged event (`event: <type>`, `data: <json>` on one line, `id: <event
 * id>`) as UTF-8 parts, never joined: the JSON may be a large body shared with other readers,
 * and joining would copy it.
 */
export const eventFrame = (e: EventJson): Frame => new Frame([Buffer.from(`event: ${e.type}\ndata: `), ...e.json, Buffer.from(`\nid: ${e.id}\n\n`)]);

/** Bytes held as parts; a slice of one part is a view of it, of several a copy of what it takes. */
export class Frame {
  readonly length: number;

  constructor(private readonly parts: readonly Buffer[]) {
    this.length = parts.reduce((n, p) => n + p.length, 0);
  }

  slice(from: number, to: number): Buffer[] {
    const out: Buffer[] = [];
    let start = 0;
    for (const part of this.parts) {
      const end = start + part.length;
      if (end > from && start < to) out.push(part.subarray(Math.max(0, from - start), Math.min(part.length, to - start)));
      start = end;
    }
    return out;
  }

  /** The whole frame as text (for tests and small frames). */
  toString(): string {
    return Buffer.concat(this.parts).toString('utf8');
  }
}

/** What `SseFrames.next` hands out: bytes to write, and the events whose frames it completes. */
export interface FramePiece {
  bytes: Buffer;
  completed: EventJson[];
}

/**
 * A reader's position in a session's SSE frames: the last event sent whole, and how many bytes
 * of the next frame are already out. Small frames are handed out together, a large one in
 * pieces, so a slow client never has more than one piece queued for it. A piece may end inside
 * a character's UTF-8 bytes: the client reads one byte stream, and the rest follows. What was
 * read from the log but not sent yet can be dropped at any moment (`drop`) and is read again
 * when it is needed: the frames of an event are the same bytes every time.
 */
export class SseFrames {
  private page: EventJson[] = [];
  private frame: Frame | undefined;
  /** Bytes of `frame` (of the event after `last`) already handed out. */
  private offset = 0;

  /**
   * @param read the events after a position, a page at a time (empty when there are none)
   * @param last the position after which the reader starts
   */
  constructor(
    private readonly read: (after: number) => EventJson[],
    private last: number,
  ) {}

  /** True unless a frame is partly handed out: only then may other frames be written. */
  get atFrameBoundary(): boolean {
    return this.offset === 0;
  }

  /** True when `next` reads from the log before it hands anything out (it holds nothing to send). */
  get readsNext(): boolean {
    return this.frame === undefined && this.page.length === 0;
  }

  /** Position of the last event whose frame was handed out whole. */
  get position(): number {
    return this.last;
  }

  /**
   * Up to `maxBytes` of the frames that come next, or undefined when the reader is at the end
   * of the log. Reads a page from the log when it holds none.
   */
  next(maxBytes: number): FramePiece | undefined {
    const parts: Buffer[] = [];
    let size = 0;
    const completed: EventJson[] = [];
    while (size < maxBytes) {
      if (this.frame === undefined) {
        if (this.page.length === 0) {
          if (size > 0) break; // hand out what is here before reading on
          this.page = this.read(this.last);
          if (this.page.length === 0) return undefined;
        }
        this.frame = eventFrame(this.page[0]!);
      }
      const end = Math.min(this.frame.length, this.offset + maxBytes - size);
      for (const part of this.frame.slice(this.offset, end)) parts.push(part);
      size += end - this.offset;
      this.offset = end;
      if (end < this.frame.length) break;
      const done = this.page.shift()!;
      completed.push(done);
      this.last = done.seq;
      this.frame = undefined;
      this.offset = 0;
    }
    // One part (a piece of a large body) goes out as a view of it; small frames are joined.
    return { bytes: parts.length === 1 ? parts[0]! : Buffer.concat(parts, size), completed };
  }

  /** Bytes held in memory: the page read but not sent (the frame being sent is its first event). */
  held(): number {
    let n = 0;
    for (const e of this.page) n += e.bytes;
    return n;
  }

  /** Lets go of what was read but not sent; the position stays, so nothing is skipped. */
  drop(): void {
    this.page = [];
    this.frame = undefined;
  }
}
