import type { EventJson } from '../../session/types';

/**
 * The SSE frame of a logged event (`event: <type>`, `data: <json>` on one line, `id: <event
 * id>`) in three parts, never joined: the JSON may be a large text shared with other readers,
 * and joining would copy it.
 */
export const eventFrame = (e: EventJson): Frame => new Frame([`event: ${e.type}\ndata: `, e.json, `\nid: ${e.id}\n\n`]);

/** A text held as parts; slices of it copy only what they take. */
export class Frame {
  readonly length: number;

  constructor(private readonly parts: readonly string[]) {
    this.length = parts.reduce((n, p) => n + p.length, 0);
  }

  slice(from: number, to: number): string {
    let out = '';
    let start = 0;
    for (const part of this.parts) {
      const end = start + part.length;
      if (end > from && start < to) out += part.slice(Math.max(0, from - start), Math.min(part.length, to - start));
      start = end;
    }
    return out;
  }

  charCodeAt(i: number): number {
    let start = 0;
    for (const part of this.parts) {
      if (i < start + part.length) return part.charCodeAt(i - start);
      start += part.length;
    }
    return NaN;
  }

  /** Full text of the frame (for tests and small frames). */
  toString(): string {
    return this.parts.join('');
  }
}

/** What `SseFrames.next` hands out: text to write, and the events whose frames it completes. */
export interface FramePiece {
  text: string;
  completed: EventJson[];
}

const isHighSurrogate = (c: number) => c >= 0xd800 && c <= 0xdbff;

/**
 * A reader's position in a session's SSE frames: the last event sent whole, and how much of the
 * next frame is already out. Small frames are handed out together, a large one in pieces, so
 * a slow client never has more than one piece queued for it. What was read from the log but
 * not sent yet can be dropped at any moment (`drop`) and is read again when it is needed: the
 * frames of an event are the same text every time.
 */
export class SseFrames {
  private page: EventJson[] = [];
  private frame: Frame | undefined;
  /** Characters of `frame` (of the event after `last`) already handed out. */
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

  /** Position of the last event whose frame was handed out whole. */
  get position(): number {
    return this.last;
  }

  /**
   * Up to `maxChars` of the frames that come next, or undefined when the reader is at the end
   * of the log. Reads a page from the log when it holds none.
   */
  next(maxChars: number): FramePiece | undefined {
    let text = '';
    const completed: EventJson[] = [];
    while (text.length < maxChars) {
      if (this.frame === undefined) {
        if (this.page.length === 0) {
          if (text) break; // hand out what is here before reading on
          this.page = this.read(this.last);
          if (this.page.length === 0) return undefined;
        }
        this.frame = eventFrame(this.page[0]!);
      }
      let end = Math.min(this.frame.length, this.offset + maxChars - text.length);
      // A piece never ends inside a surrogate pair (it would be sent as two broken characters);
      // it ends before the pair, or after it when it would be empty otherwise.
      if (end < this.frame.length && isHighSurrogate(this.frame.charCodeAt(end - 1))) {
        const empty = end - 1 === this.offset && !text;
        end += empty ? 1 : -1;
      }
      text += this.frame.slice(this.offset, end);
      this.offset = end;
      if (end < this.frame.length) break;
      const done = this.page.shift()!;
      completed.push(done);
      this.last = done.seq;
      this.frame = undefined;
      this.offset = 0;
    }
    return { text, completed };
  }

  /** Characters held in memory: the page read but not sent (the frame being sent is its first event). */
  held(): number {
    let n = 0;
    for (const e of this.page) n += e.json.length;
    return n;
  }

  /** Lets go of what was read but not sent; the position stays, so nothing is skipped. */
  drop(): void {
    this.page = [];
    this.frame = undefined;
  }
}
