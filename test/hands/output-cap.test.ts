import { describe, expect, it } from 'vitest';
import { capForModel, capHeld, capParts, endsWithNewline, heldPieces, OutputCollector } from '../../main/hands/output-cap';

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

describe('held output (pieces joined only where needed)', () => {
  /** Pieces of odd sizes, with newlines here and there and a two-unit character now and then. */
  const pieces = (n: number, seed: number) => {
    let x = seed;
    const rnd = () => ((x = (x * 1103515245 + 12345) % 2147483648) / 2147483648);
    return Array.from({ length: n }, (_, i) => {
      const len = 1 + Math.floor(rnd() * 700);
      let t = '';
      for (let k = 0; t.length < len; k++) t += rnd() < 0.05 ? '\n' : rnd() < 0.01 ? '😀' : String.fromCharCode(97 + ((i + k) % 26));
      return t;
    });
  };

  it('caps exactly as capParts of the joined text would, held whole or with its middle dropped', () => {
    for (const [n, limit, maxChars] of [[3, 64 * 1024, 30_000], [40, 64 * 1024, 30_000], [400, 64 * 1024, 30_000], [400, 20_000, 3_000], [400, 4_000, 3_000], [60, 1_000_000, 500]] as const) {
      const c = new OutputCollector(limit);
      for (const p of pieces(n, n + limit)) c.push(p);
      const old = c.finish();
      expect(capHeld(c.held(), maxChars)).toEqual(capParts(old.head, old.tail, old.droppedChars, maxChars));
    }
  });

  it('gives the full text as pieces, with the dropped line where the middle went and the status after a newline', () => {
    const c = new OutputCollector(4_000);
    for (const p of pieces(200, 7)) c.push(p);
    const held = c.held();
    expect(held.droppedBytes).toBeGreaterThan(0);
    const head = held.head.join('');
    const tail = held.tail.join('');
    const nl = (t: string) => (t === '' || t.endsWith('\n') ? '' : '\n');
    const full = head + nl(head) + '[dropped]\n' + tail;
    expect(heldPieces(held, { before: '[fresh]\n', droppedNote: '[dropped]', after: '[exit code 0]' }).join('')).toBe('[fresh]\n' + full + nl(full) + '[exit code 0]');
    const whole = new OutputCollector(1_000_000);
    whole.push('a\nb');
    expect(heldPieces(whole.held(), { before: '', droppedNote: 'never', after: '[exit code 0]' }).join('')).toBe('a\nb\n[exit code 0]');
    expect(endsWithNewline(['x\n', '', ''])).toBe(true);
    expect(endsWithNewline(['\n', 'x'])).toBe(false);
    expect(endsWithNewline([])).toBe(true);
  });

  it('takes a million and more small pieces (a command flushing short lines) as a few chunks', () => {
    const c = new OutputCollector(1024 * 1024);
    let all = '';
    for (let i = 0; i < 1_500_000; i++) {
      const piece = i % 80 === 79 ? '\n' : String.fromCharCode(97 + (i % 26));
      all += piece;
      c.push(piece);
    }
    const held = c.held();
    expect(held.droppedBytes).toBeGreaterThan(0);
    // Joined 16 KiB at a time: tens of chunks, not an object per piece.
    expect(held.head.length + held.tail.length).toBeLessThan(100);
    const full = heldPieces(held, { before: '', droppedNote: '[dropped]', after: '[exit code 0]' });
    // before, the newline and the note and its newline, the newline before the status, the status.
    expect(full.length).toBe(held.head.length + held.tail.length + 6);
    const head = held.head.map((b) => b.toString()).join('');
    const tail = held.tail.map((b) => b.toString()).join('');
    expect(all.startsWith(head)).toBe(true);
    expect(all.endsWith(tail)).toBe(true);
    expect(head.length + held.droppedChars + tail.length).toBe(all.length);
    expect(capHeld(held).truncated).toBe(true);
  });

  it('holds output as bytes off the JS heap: 48 MiB pushed grows the heap by a fraction of it', () => {
    // Held as strings, a flood of output made every young-generation collection copy them
    // (the host's loop stalled 50–180 ms at a time during `yes`; bench:flood).
    const c = new OutputCollector();
    const read = Buffer.from('y\n'.repeat(32 * 1024)); // 64 KiB, as a pipe read gives it
    const before = process.memoryUsage();
    // Each piece a string of its own, as a decoder makes it.
    for (let i = 0; i < 768; i++) c.push(read.toString('utf8'));
    const after = process.memoryUsage();
    expect(c.heldBytes).toBe(48 * 1024 * 1024);
    expect(after.arrayBuffers - before.arrayBuffers).toBeGreaterThan(40 * 1024 * 1024);
    expect(after.heapUsed - before.heapUsed).toBeLessThan(8 * 1024 * 1024);
    expect(c.held().head.every((b) => Buffer.isBuffer(b))).toBe(true);
  });
});
