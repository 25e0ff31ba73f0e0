import type { ToolOutcome } from '../types';
import { applyEdit } from '../tools/edit';
import { errorOutcome, InputError } from '../tools/input';
import { looksBinary, numberLines, splitLines, withCap } from '../tools/text';

/**
 * What read and edit make of a file's bytes. Pure and synchronous, and as slow as the file is
 * large (64 MB take a few hundred ms), so files.ts runs it inline for small files and on a worker
 * thread for large ones.
 */

/** A checked read of a file already read into `buf`. */
export interface ReadText {
  /** The path as the model gave it. */
  filePath: string;
  /** The path as shown in details (relative to the work folder). */
  shown: string;
  range: [number, number] | undefined;
}

/** A checked edit of a file already read into `buf`. */
export interface EditText {
  filePath: string;
  shown: string;
  oldString: string;
  newString: string;
  replaceAll: boolean;
}

export function readOutcome(buf: Buffer, { filePath, shown, range }: ReadText): ToolOutcome {
  if (looksBinary(buf)) {
    return errorOutcome(`${filePath} looks like a binary file (it has NUL bytes), so it is not shown as text. Inspect it with bash (e.g. file, xxd | head).`, { bytes: buf.length });
  }
  if (buf.length === 0) return { content: `[${filePath} is empty]`, isError: false, details: { path: shown, bytes: 0, total_lines: 0 } };
  const lines = splitLines(buf.toString('utf8'));
  let start = 1;
  let end = lines.length;
  if (range) {
    const [s, e] = range;
    if (s < 1) throw new InputError('Invalid input for read: view_range start_line must be 1 or more (lines are numbered from 1).');
    if (s > lines.length) return errorOutcome(`view_range starts at line ${s}, but ${filePath} has only ${lines.length} line${lines.length === 1 ? '' : 's'}.`);
    if (e > 0 && e < s) throw new InputError(`Invalid input for read: view_range end_line (${e}) is before start_line (${s}).`);
    start = s;
    end = e <= 0 ? lines.length : Math.min(e, lines.length);
  }
  const text = numberLines(lines.slice(start - 1, end), start);
  return withCap(text, { path: shown, bytes: buf.length, total_lines: lines.length, start_line: start, end_line: end });
}

/**
 * Applies an edit to `buf`: the outcome for the model and, when the edit applies, the new
 * contents to write (as bytes, so a worker can hand them over without a copy).
 */
export function editOutcome(buf: Buffer, edit: EditText): { outcome: ToolOutcome; updated?: Buffer } {
  const { filePath, newString } = edit;
  if (looksBinary(buf)) return { outcome: errorOutcome(`${filePath} looks like a binary file (it has NUL bytes); edit works on text files only.`) };
  const text = buf.toString('utf8');
  const applied = applyEdit(text, edit);
  if ('content' in applied) return { outcome: applied };
  const { updated, count, first } = applied;

  // Show the edited region (around the first replacement) so the model can check it.
  const lines = splitLines(updated);
  const firstLine = text.slice(0, first).split('\n').length;
  const newLineCount = newString.split('\n').length;
  const from = Math.max(1, firstLine - 3);
  const to = Math.min(lines.length, firstLine + newLineCount - 1 + 3, from + 40);
  const snippet = lines.length > 0 ? numberLines(lines.slice(from - 1, to), from) : '';
  const summary = `Replaced ${count} occurrence${count === 1 ? '' : 's'} in ${filePath}.`;
  const bytes = Buffer.from(updated);
  return {
    outcome: {
      content: snippet ? `${summary} Lines ${from}-${to} now read:\n${snippet}` : summary,
      isError: false,
      details: { path: edit.shown, occurrences: count, bytes_before: buf.length, bytes_after: bytes.length },
    },
    updated: bytes,
  };
}
