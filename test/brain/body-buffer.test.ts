import { describe, expect, it } from 'vitest';
import { BodyBuffer } from '../../main/brain/body-buffer';

describe('BodyBuffer', () => {
  it('encodes UTF-8 exactly and reuses its memory once a body is released, never while it is lent', () => {
    const bodies = new BodyBuffer();
    const first = bodies.encode(JSON.stringify({ text: 'héllo – ünïcode 🐄' }));
    expect(JSON.parse(first.bytes.toString('utf8'))).toEqual({ text: 'héllo – ünïcode 🐄' });
    // Lent out: a second body meanwhile gets memory of its own, and the first is not overwritten.
    const second = bodies.encode('x'.repeat(100));
    expect(second.bytes.buffer).not.toBe(first.bytes.buffer);
    expect(JSON.parse(first.bytes.toString('utf8')).text).toBe('héllo – ünïcode 🐄');
    second.release();
    first.release();
    first.release(); // twice is harmless
    const third = bodies.encode('{"a":1}');
    expect(third.bytes.buffer).toBe(first.bytes.buffer);
    expect(third.bytes.toString()).toBe('{"a":1}');
    third.release();
    // A bigger body grows it; the bytes are the body's, whatever the buffer's size.
    const big = 'y'.repeat(300_000);
    const fourth = bodies.encode(big);
    expect(fourth.bytes.length).toBe(300_000);
    expect(fourth.bytes.toString()).toBe(big);
  });
});
