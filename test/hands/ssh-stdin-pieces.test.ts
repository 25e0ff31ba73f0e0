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

it('stops writing when the channel is gone before the end', async () => {
  const c = channel();
  writeInPieces(c.w, Buffer.alloc(1024 * 1024), 128 * 1024);
  c.w.destroy();
  await new Promise((r) => setTimeout(r, 50));
  expect(c.got.length).toBeLessThanOrEqual(1);
});
