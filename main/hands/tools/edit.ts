import type { ToolOutcome } from '../types';
import { errorOutcome, InputError, optBoolean, reqString } from './input';

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
