import { capForModel } from '../output-cap';
import type { ToolOutcome } from '../types';
import { InputError } from './input';

/**
 * Text handling every hand's file tools share: what counts as binary, how lines are split and
 * numbered, `read`'s view_range, and the cap on what the model gets.
 */

/** Files bigger than this are not read whole by `read` and `edit`. */
export const MAX_FILE_BYTES = 64 * 1024 * 1024;
const BINARY_SNIFF_BYTES = 8192;

/** A file with a NUL byte in its first 8 KiB is treated as binary. */
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
