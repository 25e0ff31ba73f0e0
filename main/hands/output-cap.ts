/**
 * Output capping shared by every hand: the model gets the head and the tail of a long output
 * with a plain line saying how much was cut; the UI may keep the full text (bounded).
 */

export interface CapResult {
  /** What the model sees: the text itself, or its head and tail around a "cut here" line. */
  content: string;
  truncated: boolean;
  /** Length of the whole text, in characters (JS string length), including any part not held. */
  totalChars: number;
}

/** Default size of a tool result for the model, in characters. */
export const MODEL_OUTPUT_CHARS = 30_000;

/** Never keep more than this much full output for the UI (bytes, UTF-8). */
export const FULL_OUTPUT_LIMIT_BYTES = 64 * 1024 * 1024;

const HEAD_SHARE = 0.4;

function cutLine(cut: number): string {
  return `[… ${cut.toLocaleString('en-US')} characters cut here; the full output is kept for the UI …]`;
}

const isHighSurrogate = (c: number) => c >= 0xd800 && c <= 0xdbff;
const isLowSurrogate = (c: number) => c >= 0xdc00 && c <= 0xdfff;

/**
 * Caps `text` for the model. If it is longer than `maxChars`, keeps about 40 % from the head
 * and 60 % from the tail (snapped to line ends when one is near) with a line between them
 * saying how many characters were cut. The result is at most about `maxChars` long.
 */
export function capForModel(text: string, maxChars: number = MODEL_OUTPUT_CHARS): CapResult {
  return capParts(text, '', 0, maxChars);
}

/**
 * Like `capForModel` for a text held in two parts with `omittedChars` characters already
 * dropped between them (see `OutputCollector`): the virtual text is head + … + tail.
 */
export function capParts(head: string, tail: string, omittedChars: number, maxChars: number = MODEL_OUTPUT_CHARS): CapResult {
  const totalChars = head.length + omittedChars + tail.length;
  if (omittedChars === 0 && totalChars <= maxChars) return { content: head + tail, truncated: false, totalChars };

  const budget = Math.max(2, maxChars - cutLine(totalChars).length - 2);
  let headLen = Math.floor(budget * HEAD_SHARE);
  let tailLen = budget - headLen;
  // When the held text is short (only possible with omittedChars > 0), keep what there is.
  headLen = Math.min(headLen, head.length + tail.length);
  tailLen = Math.min(tailLen, head.length + tail.length - headLen);

  // The two ends of the virtual text.
  let front = head.length >= headLen ? head.slice(0, headLen) : head + tail.slice(0, headLen - head.length);
  let back = tail.length >= tailLen ? tail.slice(tail.length - tailLen) : head.slice(head.length - (tailLen - tail.length)) + tail;

  // Prefer whole lines when a line end is close to the cut.
  const nlFront = front.lastIndexOf('\n');
  if (nlFront >= 0 && nlFront >= front.length * 0.8) front = front.slice(0, nlFront + 1);
  const nlBack = back.indexOf('\n');
  if (nlBack >= 0 && nlBack < back.length * 0.2) back = back.slice(nlBack + 1);
  // Never split a surrogate pair.
  if (front.length > 0 && isHighSurrogate(front.charCodeAt(front.length - 1))) front = front.slice(0, -1);
  if (back.length > 0 && isLowSurrogate(back.charCodeAt(0))) back = back.slice(1);

  const cut = totalChars - front.length - back.length;
  const content = `${front}${front.endsWith('\n') || front === '' ? '' : '\n'}${cutLine(cut)}\n${back}`;
  return { content, truncated: true, totalChars };
}

/** What an `OutputCollector` holds at the end. */
export interface CollectedOutput {
  /** The held text: everything, or the first part when the middle was dropped. */
  head: string;
  /** The last part when the middle was dropped, else ''. */
  tail: string;
  /** Characters (JS string length) received in all. */
  totalChars: number;
  /** Bytes received in all. */
  totalBytes: number;
  /** Bytes dropped from the middle to stay under the limit (0 when everything is held). */
  droppedBytes: number;
  droppedChars: number;
}

/**
 * A piece of held output: its text as UTF-8 bytes, off the JS heap. Held as strings, a flood of
 * output (`yes`, up to 64 MiB held) made every young-generation collection copy them: the
 * host's loop stalled 50–180 ms at a time while it lasted. `bytes` is its size on the wire.
 */
interface Chunk {
  buf: Buffer;
  bytes: number;
  chars: number;
}

/** A held piece's text (each piece is whole text, encoded alone: it decodes to exactly that). */
const textOf = (b: Buffer) => b.toString('utf8');

/**
 * Collects streamed output in arrival order without ever holding more than `limitBytes`:
 * the first half of the limit is kept whole, then a sliding window of the last half; what
 * falls out of the window is counted and dropped. Chunks are joined once, at the end.
 */
export class OutputCollector {
  private readonly headLimit: number;
  private readonly tailLimit: number;
  private readonly headChunks: Chunk[] = [];
  private headBytes = 0;
  private tailChunks: Chunk[] = [];
  private tailStart = 0;
  private tailBytes = 0;
  private totalChars = 0;
  private totalBytes = 0;
  private droppedBytes = 0;
  private droppedChars = 0;
  /**
   * Pieces smaller than this are joined until they reach it, then held as one chunk: a command
   * writing a line at a time would otherwise cost an object per line (up to 16 KiB, or 1/64 of
   * the limit, so that the halves are still filled to within that).
   */
  private readonly joinBelow: number;
  private small: { texts: string[]; bytes: number } = { texts: [], bytes: 0 };

  constructor(limitBytes: number = FULL_OUTPUT_LIMIT_BYTES) {
    this.headLimit = Math.floor(limitBytes / 2);
    this.tailLimit = limitBytes - this.headLimit;
    this.joinBelow = Math.min(16 * 1024, Math.floor(limitBytes / 64));
  }

  /** Adds a decoded piece of text; `bytes` is its size on the wire (defaults to its UTF-8 length). */
  push(text: string, bytes: number = Buffer.byteLength(text)): void {
    if (text.length === 0) return;
    this.totalChars += text.length;
    this.totalBytes += bytes;
    if (bytes < this.joinBelow) {
      this.small.texts.push(text);
      this.small.bytes += bytes;
      if (this.small.bytes >= this.joinBelow) this.placeSmall();
      return;
    }
    this.placeSmall();
    this.place(text, bytes);
  }

  /** The small pieces waiting, as one chunk. */
  private placeSmall(): void {
    if (this.small.texts.length === 0) return;
    const { texts, bytes } = this.small;
    this.small = { texts: [], bytes: 0 };
    this.place(texts.join(''), bytes);
  }

  private place(text: string, bytes: number): void {
    const chunk = { buf: Buffer.from(text, 'utf8'), bytes, chars: text.length };
    if (this.tailBytes === 0 && this.headBytes + bytes <= this.headLimit) {
      this.headChunks.push(chunk);
      this.headBytes += bytes;
      return;
    }
    this.tailChunks.push(chunk);
    this.tailBytes += bytes;
    while (this.tailBytes > this.tailLimit && this.tailStart < this.tailChunks.length) {
      const first = this.tailChunks[this.tailStart]!;
      const excess = this.tailBytes - this.tailLimit;
      if (first.bytes <= excess) {
        this.tailStart++;
        this.tailBytes -= first.bytes;
        this.droppedBytes += first.bytes;
        this.droppedChars += first.chars;
      } else {
        // Trim the front of the oldest chunk (by characters; bytes estimated from its ratio).
        const keepBytes = first.bytes - excess;
        const keepChars = Math.max(0, Math.floor((first.chars * keepBytes) / first.bytes));
        let text = textOf(first.buf);
        text = text.slice(text.length - keepChars);
        if (text.length > 0 && isLowSurrogate(text.charCodeAt(0))) text = text.slice(1);
        const buf = Buffer.from(text, 'utf8');
        const bytesNow = buf.length;
        this.droppedBytes += first.bytes - bytesNow;
        this.droppedChars += first.chars - text.length;
        this.tailBytes -= first.bytes - bytesNow;
        this.tailChunks[this.tailStart] = { buf, bytes: bytesNow, chars: text.length };
        if (bytesNow > keepBytes) {
          // The ratio was off (mixed widths): drop the chunk rather than exceed the limit.
          this.tailStart++;
          this.tailBytes -= bytesNow;
          this.droppedBytes += bytesNow;
          this.droppedChars += text.length;
        }
      }
    }
    // Compact the window now and then so dropped chunks can be collected.
    if (this.tailStart > 1024 && this.tailStart * 2 > this.tailChunks.length) {
      this.tailChunks = this.tailChunks.slice(this.tailStart);
      this.tailStart = 0;
    }
  }

  /** Bytes currently held. */
  get heldBytes(): number {
    return this.headBytes + this.tailBytes + this.small.bytes;
  }

  /** What it holds, joined: the reference `capHeld` and `heldPieces` are tested against (the hands use `held`). */
  finish(): CollectedOutput {
    const held = this.held();
    const dropped = held.droppedBytes > 0;
    // One join when nothing was dropped: `head + tail` would be a rope that the first slice of it
    // flattens again, a second copy of up to 64 MiB on the host's loop.
    return {
      head: joinText(dropped ? held.head : [...held.head, ...held.tail]),
      tail: dropped ? joinText(held.tail) : '',
      totalChars: held.totalChars,
      totalBytes: held.totalBytes,
      droppedBytes: held.droppedBytes,
      droppedChars: held.droppedChars,
    };
  }

  /** What it holds at the end as the pieces they came in, joined by nobody yet (see `capHeld`, `joinHeld`). */
  held(): HeldOutput {
    this.placeSmall();
    const tailChunks = this.tailChunks.slice(this.tailStart);
    const head = this.headChunks.map((c) => c.buf);
    const tail = tailChunks.map((c) => c.buf);
    const dropped = this.droppedBytes > 0;
    return {
      head: dropped ? head : [...head, ...tail],
      tail: dropped ? tail : [],
      heldChars: [...this.headChunks, ...tailChunks].reduce((n, c) => n + c.chars, 0),
      totalChars: this.totalChars,
      totalBytes: this.totalBytes,
      droppedBytes: this.droppedBytes,
      droppedChars: this.droppedChars,
    };
  }
}

/**
 * An `OutputCollector`'s text as pieces: `head`, then (when `droppedBytes` > 0) the dropped middle,
 * then `tail`. Up to 64 MiB of it: joining the pieces, then joining the result with a line and
 * the status again, allocated it three times over and held the host's loop for about a second
 * (a `yes` for 3 s on an SSH hand, ~125 MB of output); the model's copy needs only its ends.
 */
export interface HeldOutput {
  /** Whole text pieces as UTF-8 (see Chunk): decode each alone (`textOf`), or leave them as bytes. */
  head: readonly Buffer[];
  tail: readonly Buffer[];
  /** Characters in head and tail. */
  heldChars: number;
  totalChars: number;
  totalBytes: number;
  droppedBytes: number;
  droppedChars: number;
}

/** Held pieces' text, joined (only where it is known to be short, or in tests). */
const joinText = (pieces: readonly Buffer[]) => pieces.map(textOf).join('');

/** The first `n` characters of the pieces (all of them when they hold fewer): decodes only those. */
function firstChars(pieces: readonly Buffer[], n: number): string {
  const out: string[] = [];
  for (let i = 0, got = 0; i < pieces.length && got < n; i++) {
    out.push(textOf(pieces[i]!));
    got += out.at(-1)!.length;
  }
  return out.join('').slice(0, n);
}

/** The last `n` characters of the pieces (all of them when they hold fewer): decodes only those. */
function lastChars(pieces: readonly Buffer[], n: number): string {
  const out: string[] = [];
  for (let i = pieces.length - 1, got = 0; i >= 0 && got < n; i--) {
    out.push(textOf(pieces[i]!));
    got += out.at(-1)!.length;
  }
  const text = out.reverse().join('');
  return text.slice(Math.max(0, text.length - n));
}

/**
 * `capParts` of held pieces, joining only their ends: the same result, since the cap keeps at
 * most `maxChars` from the front and from the back of the text.
 */
export function capHeld(held: HeldOutput, maxChars: number = MODEL_OUTPUT_CHARS): CapResult {
  const all = [...held.head, ...held.tail];
  const heldChars = held.heldChars;
  // Held text this short is joined as it was (the two parts as they are).
  if (heldChars <= 2 * maxChars) return capParts(joinText(held.head), joinText(held.tail), held.droppedChars, maxChars);
  const front = firstChars(all, maxChars);
  const back = lastChars(all, maxChars);
  return capParts(front, back, held.droppedChars + heldChars - front.length - back.length, maxChars);
}

/** Whether text made of these pieces, in order, ends with a newline (or is empty): from its last non-empty piece. */
export function endsWithNewline(pieces: readonly (string | Buffer)[]): boolean {
  for (let i = pieces.length - 1; i >= 0; i--) {
    const p = pieces[i]!;
    if (p.length > 0) return typeof p === 'string' ? p.endsWith('\n') : p[p.length - 1] === 0x0a;
  }
  return true;
}

/**
 * The full text of held pieces, as pieces (never joined: one 64 MiB string took 250 ms of the
 * host's loop here, most of it the kernel handing over fresh pages), with `before` and `after`
 * around it and, where the middle was dropped, `droppedNote` (a line) in its place.
 */
export function heldPieces(held: HeldOutput, o: { before: string; droppedNote: string; after: string }): (string | Buffer)[] {
  const parts: (string | Buffer)[] = [o.before, ...held.head];
  if (held.droppedBytes > 0) {
    parts.push(endsWithNewline(parts) ? '' : '\n', o.droppedNote, '\n');
    // One at a time: a window of many small pieces (a command flushing short lines) is more
    // arguments than a call to push(...tail) can take.
    for (const piece of held.tail) parts.push(piece);
  }
  parts.push(endsWithNewline(parts) ? '' : '\n', o.after);
  return parts;
}

/** The line put in place of the dropped middle of a full output. */
export function droppedLine(droppedBytes: number, limitBytes: number = FULL_OUTPUT_LIMIT_BYTES): string {
  const half = limitBytes / 2 / 1024 / 1024;
  return `[… ${droppedBytes.toLocaleString('en-US')} bytes dropped here: only the first and last ${half.toLocaleString('en-US')} MiB of the output are kept …]`;
}
