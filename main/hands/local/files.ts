import fs from 'node:fs';
import path from 'node:path';
import { capForModel } from '../output-cap';
import type { ToolOutcome } from '../types';
import { errorOutcome, InputError, optBoolean, reqString } from './input';
import type { WorkDir } from './paths';

/** Files bigger than this are not read whole by `read` and `edit`. */
export const MAX_FILE_BYTES = 64 * 1024 * 1024;
const BINARY_SNIFF_BYTES = 8192;

export function looksBinary(buf: Buffer): boolean {
  return buf.subarray(0, BINARY_SNIFF_BYTES).includes(0);
}

/** `cat -n` style: the line number right-aligned in 6 columns, a tab, the line. */
export function numberLines(lines: readonly string[], firstLineNo: number): string {
  return lines.map((line, i) => `${String(firstLineNo + i).padStart(6)}\t${line}`).join('\n');
}

export function splitLines(text: string): string[] {
  const lines = text.split('\n');
  if (lines.length > 1 && lines[lines.length - 1] === '') lines.pop();
  return lines;
}

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

export function withCap(text: string, details: Record<string, unknown>): ToolOutcome {
  const cap = capForModel(text);
  const outcome: ToolOutcome = { content: cap.content, isError: false, details: { ...details, truncated: cap.truncated } };
  if (cap.truncated) outcome.fullOutput = text;
  return outcome;
}

export function parseViewRange(v: unknown): [number, number] | undefined {
  if (v === undefined || v === null) return undefined;
  if (!Array.isArray(v) || v.length !== 2 || !v.every((n) => typeof n === 'number' && Number.isInteger(n))) {
    throw new InputError('Invalid input for read: "view_range" must be [start_line, end_line], two whole numbers (1-based; end_line -1 means to the end of the file).');
  }
  return [v[0] as number, v[1] as number];
}

export function readTool(work: WorkDir, input: Record<string, unknown>): ToolOutcome {
  const filePath = reqString(input, 'file_path', 'read');
  const range = parseViewRange(input.view_range);
  const abs = work.resolve(filePath);
  const st = openable(abs, filePath, 'read');
  if (!(st instanceof fs.Stats)) return st;
  const buf = work.readFile(abs);
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
  work.writeFile(abs, content);
  const bytes = Buffer.byteLength(content);
  const what = previous ? `replaced its previous ${previous.size.toLocaleString('en-US')} bytes` : 'new file';
  return {
    content: `Wrote ${bytes.toLocaleString('en-US')} bytes to ${filePath} (${what}).`,
    isError: false,
    details: { path: work.display(abs), bytes, created: !previous },
  };
}

function countOccurrences(text: string, needle: string): number {
  let count = 0;
  for (let i = text.indexOf(needle); i !== -1; i = text.indexOf(needle, i + needle.length)) count++;
  return count;
}

/** The edit tool's rule, for every hand: `old` must occur once (or replace_all), and differ from `new`. */
export function applyEdit(
  text: string,
  edit: { filePath: string; oldString: string; newString: string; replaceAll: boolean },
): { updated: string; count: number; first: number } | ToolOutcome {
  const { filePath, oldString, newString, replaceAll } = edit;
  const count = countOccurrences(text, oldString);
  if (count === 0) {
    return errorOutcome(`old_string was not found in ${filePath}. It must match the file exactly, including whitespace and indentation; read the file to check.`);
  }
  if (count > 1 && !replaceAll) {
    return errorOutcome(`old_string occurs ${count} times in ${filePath}, but it must occur exactly once. Include more surrounding lines to make it unique, or set replace_all to true to replace every occurrence.`, { occurrences: count });
  }
  return { updated: text.split(oldString).join(newString), count, first: text.indexOf(oldString) };
}

/** Reads edit's input, refusing an empty or unchanged old_string. */
export function editInput(input: Record<string, unknown>): { filePath: string; oldString: string; newString: string; replaceAll: boolean } {
  const filePath = reqString(input, 'file_path', 'edit');
  const oldString = reqString(input, 'old_string', 'edit');
  const newString = reqString(input, 'new_string', 'edit');
  const replaceAll = optBoolean(input, 'replace_all', 'edit') ?? false;
  if (oldString === '') throw new InputError('Invalid input for edit: "old_string" is empty; to create or overwrite a whole file, use write.');
  if (oldString === newString) throw new InputError('Invalid input for edit: "old_string" and "new_string" are the same, so the edit would change nothing.');
  return { filePath, oldString, newString, replaceAll };
}

export function editTool(work: WorkDir, input: Record<string, unknown>): ToolOutcome {
  const edit = editInput(input);
  const { filePath, newString } = edit;
  const abs = work.resolve(filePath);
  const st = openable(abs, filePath, 'edit');
  if (!(st instanceof fs.Stats)) return st;
  const buf = work.readFile(abs);
  if (looksBinary(buf)) return errorOutcome(`${filePath} looks like a binary file (it has NUL bytes); edit works on text files only.`);
  const text = buf.toString('utf8');
  const applied = applyEdit(text, edit);
  if ('content' in applied) return applied;
  const { updated, count, first } = applied;
  work.writeFile(abs, updated);

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
