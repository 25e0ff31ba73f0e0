import { describe, expect, it } from 'vitest';
import { splitDelta, type LiveDelta } from '../../main/brain/live-text';

const delta = (text: string): LiveDelta => ({ type: 'event_delta', event_id: 'sevt_x', delta: { type: 'content_delta', content: { type: 'text', text }, index: 0 } });
const textOf = (d: LiveDelta) => (d.type === 'event_delta' ? d.delta.content.text : '');

describe('splitDelta', () => {
  it('passes small deltas and starts through, and cuts a huge one into pieces that join to it', () => {
    expect(splitDelta(delta('hello'))).toEqual([delta('hello')]);
    const start: LiveDelta = { type: 'event_start', event: { id: 'sevt_x', type: 'agent.message' } };
    expect(splitDelta(start)).toEqual([start]);
    const big = 'x'.repeat(10) + '😀'.repeat(5);
    const pieces = splitDelta(delta(big), 11); // 11 would end inside the first emoji's pair
    expect(pieces.map(textOf).join('')).toBe(big);
    for (const p of pieces) {
      const t = textOf(p);
      expect(t.length).toBeLessThanOrEqual(11);
      expect(t.charCodeAt(t.length - 1) >= 0xd800 && t.charCodeAt(t.length - 1) <= 0xdbff).toBe(false);
    }
  });
});
