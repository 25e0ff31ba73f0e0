/** A command's stdin goes to an SSH channel a piece at a time, the host's loop running between. */
import crypto from 'node:crypto';
import { Writable } from 'node:stream';
import { expect, it } from 'vitest';
import { writeInPieces } from '../../main/hands/ssh/stdin-pieces';

/** A channel that takes every write at once (an open window), recording what it got. */
function channel() {
  const got: Buffer[] = [];
  const w = new Writable({ write: (c: Buffer, _e, cb) => (got.push(Buffer.from(c)), cb()) });
  const ended = new Promise<void>((r) => w.on('finish', r));
  return { w, got, ended };
}

it('writes every byte in order, in pieces, with the loop getting turns between them, then ends', async () => {
  const data = crypto.randomBytes(3 * 1024 * 1024 + 123);
  const c = channel();
  let turns = 0;
  const tick = setInterval(() => turns++, 0);
  writeInPieces(c.w, data, 256 * 1024);
  await c.ended;
  clearInterval(tick);
  expect(Buffer.concat(c.got).equals(data)).toBe(true);
  expect(c.got.length).toBe(13);
  expect(turns).toBeGreaterThan(3);
});

it('takes the bytes of many buffers in order, as pieces of up to the size asked, without joining them', async () => {
  // As a pack read from tar's pipe: 64 KiB pieces, an odd one, an empty one.
  const buffers = [...Array.from({ length: 20 }, () => crypto.randomBytes(64 * 1024)), crypto.randomBytes(1000), Buffer.alloc(0), crypto.randomBytes(7)];
  const c = channel();
  // Writes made in one synchronous run share a number: a run is one piece.
  const writes: number[] = [];
  let run = 0;
  let inRun = false;
  const w = c.w.write.bind(c.w);
  c.w.write = ((chunk: Buffer, cb?: () => void) => {
    if (!inRun) [inRun, run] = [true, run + 1];
    queueMicrotask(() => (inRun = false));
    writes.push(run);
    return w(chunk, cb as never);
  }) as typeof c.w.write;
  writeInPieces(c.w, buffers, 256 * 1024);
  await c.ended;
  expect(Buffer.concat(c.got).equals(Buffer.concat(buffers))).toBe(true);
  // Views of the buffers, not a copy: each write is one buffer or a part of one.
  expect(c.got.every((g) => g.length <= 64 * 1024)).toBe(true);
  // 256 KiB (four buffers) at a time: 1,311,727 bytes in 6 pieces.
  expect(new Set(writes).size).toBe(6);
});

it('stops writing when the channel is gone before the end', async () => {
  const c = channel();
  writeInPieces(c.w, Buffer.alloc(1024 * 1024), 128 * 1024);
  c.w.destroy();
  await new Promise((r) => setTimeout(r, 50));
  expect(c.got.length).toBeLessThanOrEqual(1);
});
