/**
 * An allowed host may echo what it received (an error message quoting the header, a debugging
 * endpoint): the answer to a request that got a credential's value goes back to the hand with
 * the value turned back into the placeholder. Done on the stream, holding back the longest
 * value less one byte so a value split across chunks is still found.
 */
import { Transform } from 'node:stream';

/** Replaces each `value` by its `placeholder` in a byte stream. */
export function unecho(pairs: { value: string; placeholder: string }[]): Transform {
  const list = pairs.map((p) => ({ value: Buffer.from(p.value), placeholder: Buffer.from(p.placeholder) })).filter((p) => p.value.length > 0);
  const hold = Math.max(0, ...list.map((p) => p.value.length - 1));
  let pending: Buffer = Buffer.alloc(0);
  const swap = (buf: Buffer): Buffer => {
    let out = buf;
    for (const p of list) {
      let at = out.indexOf(p.value);
      if (at < 0) continue;
      const parts: Buffer[] = [];
      let from = 0;
      while (at >= 0) {
        parts.push(out.subarray(from, at), p.placeholder);
        from = at + p.value.length;
        at = out.indexOf(p.value, from);
      }
      parts.push(out.subarray(from));
      out = Buffer.concat(parts);
    }
    return out;
  };
  return new Transform({
    transform(chunk: Buffer, _enc, done) {
      const all = swap(Buffer.concat([pending, chunk]));
      // A value's start may be in the tail: keep it for the next chunk.
      const cut = Math.max(0, all.length - hold);
      pending = all.subarray(cut);
      done(null, all.subarray(0, cut));
    },
    flush(done) {
      done(null, swap(pending));
    },
  });
}
