import { describe, expect, it } from 'vitest';
import { eventFrame, SseFrames } from '../../main/api/http/sse-frames';
import type { EventJson } from '../../main/session/types';

/** An event whose JSON is `json`, in two parts as the log gives it. */
function eventJson(seq: number, type: string, json: string): EventJson {
  const bytes = Buffer.from(json);
  const cut = Math.floor(bytes.length / 2);
  return { seq, id: `sevt_${seq}`, type, json: [bytes.subarray(0, cut), bytes.subarray(cut)], bytes: bytes.length };
}

/** Events 1..n with texts of mixed sizes (4-byte characters included), read `perPage` at a time. */
function log(n: number, perPage: number) {
  const events: EventJson[] = Array.from({ length: n }, (_, i) => {
    const text = i % 3 === 0 ? '😀'.repeat(5000 + i) : `e${i}`;
    return eventJson(i + 1, 'user.message', JSON.stringify({ text, seq: i + 1 }));
  });
  let reads = 0;
  const read = (after: number) => {
    reads++;
    return events.filter((e) => e.seq > after).slice(0, perPage);
  };
  return { events, read, reads: () => reads, whole: events.map((e) => eventFrame(e).toString()).join('') };
}

describe('SSE frames', () => {
  it('hand out every frame whole and in order, in pieces of at most the size asked', () => {
    const { read, whole } = log(30, 4);
    const frames = new SseFrames(read, 0);
    const out: Buffer[] = [];
    for (let piece, i = 0; (piece = frames.next(1 + ((i * 7919) % 9000))); i++) {
      expect(piece.bytes.length).toBeGreaterThan(0);
      expect(piece.bytes.length).toBeLessThanOrEqual(1 + ((i * 7919) % 9000));
      out.push(piece.bytes);
    }
    // The client reads one byte stream: characters split between pieces arrive whole.
    expect(Buffer.concat(out).toString('utf8')).toBe(whole);
    expect(frames.position).toBe(30);
  });

  it('after a drop, read again from the log and go on from the same byte, mid-frame or not', () => {
    const { read, whole, reads } = log(12, 5);
    const frames = new SseFrames(read, 0);
    const out: Buffer[] = [];
    for (let piece, i = 0; (piece = frames.next(3000)); i++) {
      out.push(piece.bytes);
      if (i % 2 === 1) frames.drop();
      if (frames.atFrameBoundary) expect(Buffer.concat(out).toString('utf8').endsWith('\n\n')).toBe(true);
    }
    expect(Buffer.concat(out).toString('utf8')).toBe(whole);
    expect(reads()).toBeGreaterThan(3); // dropped pages were read again
  });

  it('hand out a large part as a view of it, not a copy', () => {
    const e = eventJson(1, 't.t', JSON.stringify({ text: 'x'.repeat(100_000) }));
    const frames = new SseFrames((after) => (after === 0 ? [e] : []), 0);
    frames.next(1000); // the frame's head and the start of the body
    const piece = frames.next(1000)!;
    expect(piece.bytes.buffer).toBe(e.json[0]!.buffer);
    expect(piece.bytes.length).toBe(1000);
  });

  it('start after the given position', () => {
    const { read, events } = log(5, 10);
    const frames = new SseFrames(read, 3);
    expect(frames.next(1_000_000)!.completed.map((e) => e.seq)).toEqual([4, 5]);
    expect(frames.next(10)).toBeUndefined();
    expect(events).toHaveLength(5);
  });
});
