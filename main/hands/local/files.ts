import fs from 'node:fs';
import path from 'node:path';
import type { ToolOutcome } from '../types';
import { applyEdit, editInput } from '../tools/edit';
import { errorOutcome, InputError, reqString } from '../tools/input';
import { looksBinary, MAX_FILE_BYTES, numberLines, parseViewRange, splitLines, withCap } from '../tools/text';
import type { WorkDir } from './paths';

/** Stats an existing regular file for reading, or returns why it cannot be read. */
function openable(abs: string, shown: string, tool: string): fs.Stats | ToolOutcome {
  let st: fs.Stats;
  try {
    st = fs.statSync(abs);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return errorOutcome(`File not found: ${shown}`);
    throw err;
  }
  if (st.isDirectory()) return errorOutcome(`${shown} is a directory, not a file; use glob (or bash ls) to list it.`);
  if (!st.isFile()) return errorOutcome(`${shown} is not a regular file.`);
  if (st.size > MAX_FILE_BYTES) {
    return errorOutcome(`${shown} is too large for ${tool} (${st.size.toLocaleString('en-US')} bytes; the limit is ${MAX_FILE_BYTES.toLocaleString('en-US')}). Use bash (head, tail, sed -n, grep) to work with parts of it.`);
  }
  return st;
}

export function readTool(work: WorkDir, input: Record<string, unknown>): ToolOutcome {
  const filePath = reqString(input, 'file_path', 'read');
  const range = parseViewRange(input.view_range);
  const abs = work.resolve(filePath);
  const st = openable(abs, filePath, 'read');
  if (!(st instanceof fs.Stats)) return st;
  const buf = fs.readFileSync(abs);
  if (looksBinary(buf)) {
    return errorOutcome(`${filePath} looks like a binary file (it has NUL bytes), so it is not shown as text. Inspect it with bash (e.g. file, xxd | head).`, { bytes: buf.length });
  }
  const shown = work.display(abs);
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

export function writeTool(work: WorkDir, input: Record<string, unknown>): ToolOutcome {
  const filePath = reqString(input, 'file_path', 'write');
  const content = reqString(input, 'content', 'write');
  const abs = work.resolve(filePath);
  let previous: fs.Stats | undefined;
  try {
    previous = fs.statSync(abs);
  } catch {
    previous = undefined;
  }
  if (previous?.isDirectory()) return errorOutcome(`${filePath} is a directory; give the path of a file to write.`);
  fs.mkdirSync(path.dirname(abs), { recursive: true });
  fs.writeFileSync(abs, content);
  const bytes = Buffer.byteLength(content);
  const what = previous ? `replaced its previous ${previous.size.toLocaleString('en-US')} bytes` : 'new file';
  return {
    content: `Wrote ${bytes.toLocaleString('en-US')} bytes to ${filePath} (${what}).`,
    isError: false,
    details: { path: work.display(abs), bytes, created: !previous },
  };
}

export function editTool(work: WorkDir, input: Record<string, unknown>): ToolOutcome {
  const edit = editInput(input);
  const { filePath, newString } = edit;
  const abs = work.resolve(filePath);
  const st = openable(abs, filePath, 'edit');
  if (!(st instanceof fs.Stats)) return st;
  const buf = fs.readFileSync(abs);
  if (looksBinary(buf)) return errorOutcome(`${filePath} looks like a binary file (it has NUL bytes); edit works on text files only.`);
  const text = buf.toString('utf8');
  const applied = applyEdit(text, edit);
  if ('content' in applied) return applied;
  const { updated, count, first } = applied;
  fs.writeFileSync(abs, updated);

  // Show the edited region (around the first replacement) so the model can check it.
  const lines = splitLines(updated);
  const firstLine = text.slice(0, first).split('\n').length;
  const newLineCount = newString.split('\n').length;
  const from = Math.max(1, firstLine - 3);
  const to = Math.min(lines.length, firstLine + newLineCount - 1 + 3, from + 40);
  const snippet = lines.length > 0 ? numberLines(lines.slice(from - 1, to), from) : '';
  const summary = `Replaced ${count} occurrence${count === 1 ? '' : 's'} in ${filePath}.`;
  return {
    content: snippet ? `${summary} Lines ${from}-${to} now read:\n${snippet}` : summary,
    isError: false,
    details: { path: work.display(abs), occurrences: count, bytes_before: buf.length, bytes_after: Buffer.byteLength(updated) },
  };
}
