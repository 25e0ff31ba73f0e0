import fs from 'node:fs/promises';

/** Characters encoded and written at a time: about a millisecond of the loop each. */
const SLICE_CHARS = 1024 * 1024;

const isHighSurrogate = (c: number) => c >= 0xd800 && c <= 0xdbff;

/** Rewrites text slice by slice (the vault's stream redactor): may hold text back until `end`. */
export interface TextFilter {
  push(chunk: string): string;
  end(): string;
}

/**
 * Pieces of text as slices of about `sliceChars` characters: small pieces are joined into one
 * slice, a large one is cut (never inside a surrogate pair), so no slice is ever much larger.
 */
function* slicesOf(pieces: readonly (string | Buffer)[], sliceChars: number): Generator<string> {
  let group: string[] = [];
  let groupChars = 0;
  for (const piece of pieces) {
    // A piece in bytes is whole text (output-cap.ts): decoded only now, as it is written.
    const text = typeof piece === 'string' ? piece : piece.toString('utf8');
    if (text.length < sliceChars) {
      group.push(text);
      groupChars += text.length;
      if (groupChars >= sliceChars) {
        yield group.join('');
        group = [];
        groupChars = 0;
      }
      continue;
    }
    if (group.length) yield group.join('');
    group = [];
    groupChars = 0;
    for (let start = 0; start < text.length; ) {
      let end = Math.min(text.length, start + sliceChars);
      // A surrogate pair split across two slices would be encoded as two U+FFFD: keep it whole.
      if (end < text.length && isHighSurrogate(text.charCodeAt(end - 1))) end += end - start > 1 ? -1 : 1;
      yield text.slice(start, end);
      start = end;
    }
  }
  if (group.length) yield group.join('');
}

/**
 * Writes a string, or pieces of one in order (strings, or whole text as UTF-8), to a file as
 * UTF-8, a slice at a time; returns the text's length in characters (before any filter).
 * `fs.promises.writeFile` encodes the whole string at once on the calling thread (50–100 ms for
 * 64 MiB here), and joining 64 MiB of pieces first costs more; this never holds the host's event
 * loop longer than one slice takes. Same bytes as writeFile of the joined text, unless a filter
 * (e.g. redaction of the vault's values) rewrites the slices on the way.
 */
export async function writeTextFile(file: string, text: string | readonly (string | Buffer)[], sliceChars: number = SLICE_CHARS, mode = 0o600, filter?: TextFilter): Promise<number> {
  // Private by default (the outputs are transcripts), whatever the umask.
  const handle = await fs.open(file, 'w', mode);
  let carry = '';
  const write = async (piece: string, last: boolean) => {
    let t = carry + piece;
    carry = '';
    // A filter's output may end inside a surrogate pair: its first half waits for the rest.
    if (!last && t.length > 0 && isHighSurrogate(t.charCodeAt(t.length - 1))) {
      carry = t.slice(-1);
      t = t.slice(0, -1);
    }
    const bytes = Buffer.from(t, 'utf8');
    for (let written = 0; written < bytes.length; ) written += (await handle.write(bytes, written)).bytesWritten;
  };
  let chars = 0;
  try {
    for (const slice of slicesOf(typeof text === 'string' ? [text] : text, sliceChars)) {
      chars += slice.length;
      await write(filter ? filter.push(slice) : slice, false);
    }
    await write(filter ? filter.end() : '', true);
  } finally {
    await handle.close();
  }
  return chars;
}
