import fs from 'node:fs';
import path from 'node:path';
import type { SessionLog } from '../../../session/store';
import type { FullOutputChunk } from '../contract';
import { missing, refuse } from './errors';

const DEFAULT_LENGTH = 1024 * 1024;
/** Names the hand registry gives kept outputs: a tool-use id (sanitised) and `.txt`. */
const FILE_NAME = /^[A-Za-z0-9_-]{1,200}\.txt$/;

/**
 * A piece of the full output the host kept for a tool result (`details.full_output.file`),
 * read only from `DATA/outputs/<session>/`, where <session> is the session whose log holds the
 * event (a fork's early events belong to its parent). The file is named by the logged event,
 * never by the caller, and must be a plain file inside that folder.
 */
export function readFullOutput(log: SessionLog, dataDir: string, sessionId: string, seq: number, offset = 0, length = DEFAULT_LENGTH): FullOutputChunk {
  const [event] = log.getEvents(sessionId, { from: seq, to: seq, limit: 1 });
  if (!event) throw missing('event', `#${seq}`);
  const file = (event.details as { full_output?: { file?: unknown } } | undefined)?.full_output?.file;
  if (event.type !== 'agent.tool_result' || typeof file !== 'string') throw refuse(`event #${seq} has no full output kept`);
  if (!FILE_NAME.test(file)) throw refuse(`event #${seq} names an output file that is not one of Corral's`);
  const owner = log.segments(sessionId).find((s) => seq >= s.lo && seq <= s.hi)?.sessionId ?? sessionId;
  const folder = path.resolve(dataDir, 'outputs', owner);
  const full = path.join(folder, file);
  let real: string;
  try {
    real = fs.realpathSync(full);
  } catch {
    throw missing('kept output', file);
  }
  if (path.dirname(real) !== fs.realpathSync(folder)) throw refuse('the kept output is not inside its session\'s folder');
  const fd = fs.openSync(real, 'r');
  try {
    const total = fs.fstatSync(fd).size;
    const start = Math.min(offset, total);
    const buf = Buffer.alloc(Math.min(length, total - start));
    const read = fs.readSync(fd, buf, 0, buf.length, start);
    // Never cut a UTF-8 character in two: end the piece before a partial one.
    let end = read;
    if (start + read < total) end = utf8Boundary(buf, read);
    return { file, text: buf.subarray(0, end).toString('utf8'), offset: start, next_offset: start + end < total ? start + end : null, total_bytes: total };
  } finally {
    fs.closeSync(fd);
  }
}

/** The largest length ≤ n at which `buf` does not end inside a multi-byte character. */
function utf8Boundary(buf: Buffer, n: number): number {
  let i = n;
  // Step back over continuation bytes (10xxxxxx) to the lead byte.
  while (i > 0 && i > n - 4 && (buf[i - 1]! & 0xc0) === 0x80) i--;
  if (i === 0) return n;
  const lead = buf[i - 1]!;
  const need = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1;
  return n - (i - 1) >= need ? n : i - 1;
}
