import { describe, expect, it } from 'vitest';
import { eventFrame, SseFrames } from '../../main/api/http/sse-frames';
import type { EventJson } from '../../main/session/types';

/** Events 1..n with texts of mixed sizes (surrogate pairs included), read `perPage` at a time. */
function log(n: number, perPage: number) {
  const events: EventJson[] = Array.from({ length: n }, (_, i) => {
    const text = i % 3 === 0 ? '😀'.repeat(5000 + i) : `e${i}`;
    return { seq: i + 1, id: `sevt_${i + 1}`, type: 'user.message', json: JSON.stringify({ text, seq: i + 1 }) };
  });
  let reads = 0;
  const read = (after: number) => {
    reads++;
    return events.filter((e) => e.seq > after).slice(0, perPage);
  };
  return { events, read, reads: () => reads, whole: events.map((e) => eventFrame(e).toString()).join('') };
}

describe('SSE frames', () => {
  it('hand out every frame whole and in order, in pieces of at most the size asked, never splitting a surrogate pair', () => {
    const { read, whole } = log(30, 4);
    const frames = new SseFrames(read, 0);
    let out = '';
    for (let piece, i = 0; (piece = frames.next(1 + ((i * 7919) % 9000))); i++) {
      expect(piece.text.length).toBeLessThanOrEqual(1 + ((i * 7919) % 9000));
      const last = piece.text.charCodeAt(piece.text.length - 1);
      expect(last >= 0xd800 && last <= 0xdbff).toBe(false);
      out += piece.text;
    }
    expect(out).toBe(whole);
    expect(frames.position).toBe(30);
  });

  it('after a drop, read again from the log and go on from the same byte, mid-frame or not', () => {
    const { read, whole, reads } = log(12, 5);
    const frames = new SseFrames(read, 0);
    let out = '';
    for (let piece, i = 0; (piece = frames.next(3000)); i++) {
      out += piece.text;
      if (i % 2 === 1) frames.drop();
      if (frames.atFrameBoundary) expect(out.endsWith('\n\n')).toBe(true);
    }
    expect(out).toBe(whole);
    expect(reads()).toBeGreaterThan(3); // dropped pages were read again
  });

  it('hand out a whole surrogate pair when a piece of one character would split it', () => {
    const e: EventJson = { seq: 1, id: 'sevt_1', type: 't.t', json: '"😀"' };
    const frames = new SseFrames((after) => (after === 0 ? [e] : []), 0);
    const prefix = 'event: t.t\ndata: "';
    expect(frames.next(prefix.length)!.text).toBe(prefix);
    expect(frames.next(1)!.text).toBe('😀');
  });

  it('start after the given position', () => {
    const { read, events } = log(5, 10);
    const frames = new SseFrames(read, 3);
    expect(frames.next(1_000_000)!.completed.map((e) => e.seq)).toEqual([4, 5]);
    expect(frames.next(10)).toBeUndefined();
    expect(events).toHaveLength(5);
  });
});
