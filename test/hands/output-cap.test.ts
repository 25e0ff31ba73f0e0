import { describe, expect, it } from 'vitest';
import { capForModel, capParts, OutputCollector } from '../../main/hands/output-cap';

const CUT = /\n?\[… ([\d,]+) characters cut here; the full output is kept for the UI …\]\n/;

function split(content: string) {
  const m = CUT.exec(content);
  expect(m).not.toBeNull();
  return { head: content.slice(0, m!.index), tail: content.slice(m!.index + m![0].length), cut: Number(m![1]!.replace(/,/g, '')) };
}

describe('capForModel', () => {
  it('leaves short text alone', () => {
    expect(capForModel('hello', 10)).toEqual({ content: 'hello', truncated: false, totalChars: 5 });
    expect(capForModel('x'.repeat(30_000))).toMatchObject({ truncated: false, totalChars: 30_000 });
  });

  it('keeps about 40% head and 60% tail and says how much was cut', () => {
    const text = Array.from({ length: 1_000_000 }, (_, i) => String(i % 10)).join('');
    const r = capForModel(text);
    expect(r.truncated).toBe(true);
    expect(r.totalChars).toBe(1_000_000);
    expect(r.content.length).toBeLessThanOrEqual(30_000);
    expect(r.content.length).toBeGreaterThan(29_000);
    const { head, tail, cut } = split(r.content);
    expect(text.startsWith(head)).toBe(true);
    expect(text.endsWith(tail)).toBe(true);
    expect(cut).toBe(1_000_000 - head.length - tail.length);
    expect(head.length / (head.length + tail.length)).toBeCloseTo(0.4, 2);
    expect(r.content).toContain('characters cut here');
  });

  it('cuts at line ends when one is near', () => {
    const text = Array.from({ length: 10_000 }, (_, i) => `line number ${i}`).join('\n');
    const { head, tail } = split(capForModel(text, 2_000).content);
    expect(head.endsWith('\n') || /line number \d+$/.test(head)).toBe(true);
    expect(head.split('\n').slice(0, -1).every((l) => /^line number \d+$/.test(l))).toBe(true);
    expect(tail.split('\n').every((l) => /^line number \d+$/.test(l))).toBe(true);
  });

  it('never splits a surrogate pair', () => {
    const text = '😀'.repeat(50_000);
    const { head, tail } = split(capForModel(text, 1_000).content);
    expect(head.length % 2).toBe(0);
    expect(tail.length % 2).toBe(0);
    expect(head).toBe('😀'.repeat(head.length / 2));
    expect(tail).toBe('😀'.repeat(tail.length / 2));
  });

  it('counts characters dropped before capping (capParts)', () => {
    const r = capParts('h'.repeat(50_000), 't'.repeat(50_000), 1_000_000, 10_000);
    expect(r.totalChars).toBe(1_100_000);
    const { head, tail, cut } = split(r.content);
    expect(head).toMatch(/^h+$/);
    expect(tail).toMatch(/^t+$/);
    expect(cut).toBe(1_100_000 - head.length - tail.length);
  });
});

describe('OutputCollector', () => {
  it('holds everything, in order, under the limit', () => {
    const c = new OutputCollector(1000);
    for (let i = 0; i < 10; i++) c.push(`${i}`.repeat(50));
    const out = c.finish();
    expect(out.head).toBe(Array.from({ length: 10 }, (_, i) => `${i}`.repeat(50)).join(''));
    expect(out).toMatchObject({ tail: '', totalChars: 500, totalBytes: 500, droppedBytes: 0 });
  });

  it('never holds more than the limit, keeping the first and last halves', () => {
    const c = new OutputCollector(1000);
    let all = '';
    for (let i = 0; i < 100; i++) {
      const piece = `<${String(i).padStart(3, '0')}>`.repeat(15).slice(0, 73); // odd sizes straddle the halves
      all += piece;
      c.push(piece);
      expect(c.heldBytes).toBeLessThanOrEqual(1000);
    }
    const out = c.finish();
    expect(out.totalBytes).toBe(7300);
    expect(out.head.length + out.tail.length).toBeLessThanOrEqual(1000);
    expect(out.droppedBytes).toBe(7300 - out.head.length - out.tail.length);
    expect(all.startsWith(out.head)).toBe(true);
    expect(all.endsWith(out.tail)).toBe(true);
    expect(out.head.length).toBeGreaterThan(400);
    expect(out.tail.length).toBeGreaterThan(450);
  });

  it('counts bytes of multi-byte text', () => {
    const c = new OutputCollector(100);
    for (let i = 0; i < 40; i++) c.push('é'); // 2 bytes each
    const out = c.finish();
    expect(out.totalBytes).toBe(80);
    expect(out.totalChars).toBe(40);
    expect(out.droppedBytes).toBe(0);
    const d = new OutputCollector(100);
    for (let i = 0; i < 100; i++) d.push('éé');
    expect(d.heldBytes).toBeLessThanOrEqual(100);
    expect(d.finish().droppedChars).toBeGreaterThan(100);
  });
});
