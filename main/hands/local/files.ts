import fs from 'node:fs/promises';
import path from 'node:path';
import type { ToolOutcome } from '../types';
import { editInput } from '../tools/edit';
import { errorOutcome, reqString } from '../tools/input';
import { MAX_FILE_BYTES, parseViewRange } from '../tools/text';
import { editOutcome, readOutcome } from './file-text';
import { runOffLoop } from './off-loop/lanes';
import type { WorkDir } from './paths';

/**
 * read, write and edit on the local hand, with fs.promises so the host's event loop never waits
 * on the disk. Turning a large file into numbered lines or applying an edit to it is CPU work
 * that grows with the file (about 6 ms per MB here), so files above OFF_LOOP_BYTES are handled
 * whole on a worker thread; smaller ones inline, which is quicker for them.
 */

/** Files larger than this are read or edited on a worker thread. */
export const OFF_LOOP_BYTES = 1024 * 1024;

/** Stats an existing regular file for reading, or returns why it cannot be read. */
async function openable(abs: string, shown: string, tool: string): Promise<{ size: number } | ToolOutcome> {
  let st;
  try {
    st = await fs.stat(abs);
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
  return { size: st.size };
}

export async function readTool(work: WorkDir, input: Record<string, unknown>): Promise<ToolOutcome> {
  const filePath = reqString(input, 'file_path', 'read');
  const range = parseViewRange(input.view_range);
  const abs = work.resolve(filePath);
  const st = await openable(abs, filePath, 'read');
  if ('isError' in st) return st;
  const text = { filePath, shown: work.display(abs), range };
  if (st.size > OFF_LOOP_BYTES) return runOffLoop('text', { kind: 'read', workDir: work.dir, abs, text });
  return readOutcome(await work.readFileAsync(abs), text);
}

export async function writeTool(work: WorkDir, input: Record<string, unknown>): Promise<ToolOutcome> {
  const filePath = reqString(input, 'file_path', 'write');
  const content = reqString(input, 'content', 'write');
  const abs = work.resolve(filePath);
  const previous = await fs.stat(abs).catch(() => undefined);
  if (previous?.isDirectory()) return errorOutcome(`${filePath} is a directory; give the path of a file to write.`);
  await fs.mkdir(path.dirname(abs), { recursive: true });
  await work.writeFileAsync(abs, content);
  const bytes = Buffer.byteLength(content);
  const what = previous ? `replaced its previous ${previous.size.toLocaleString('en-US')} bytes` : 'new file';
  return {
    content: `Wrote ${bytes.toLocaleString('en-US')} bytes to ${filePath} (${what}).`,
    isError: false,
    details: { path: work.display(abs), bytes, created: !previous },
  };
}

export async function editTool(work: WorkDir, input: Record<string, unknown>): Promise<ToolOutcome> {
  const edit = editInput(input);
  const abs = work.resolve(edit.filePath);
  const st = await openable(abs, edit.filePath, 'edit');
  if ('isError' in st) return st;
  const text = { ...edit, shown: work.display(abs) };
  if (st.size > OFF_LOOP_BYTES) return runOffLoop('text', { kind: 'edit', workDir: work.dir, abs, text });
  const { outcome, updated } = editOutcome(await work.readFileAsync(abs), text);
  if (updated) await work.writeFileAsync(abs, updated);
  return outcome;
}
