import fsp from 'node:fs/promises';
import path from 'node:path';
import type { ToolOutcome } from './types';
import { writeTextFile, type TextFilter } from './write-text';

/**
 * Keeps an output too long for the model in a file of `dir` for the UI; the model's copy stays
 * capped. Asynchronous and written a slice at a time: a full output may be 64 MiB, and the host's
 * loop must wait neither on the disk nor on encoding it all at once.
 */
export async function keepFullOutput(dir: string, toolUseId: string | undefined, outcome: ToolOutcome, redact: (() => TextFilter | undefined) | undefined): Promise<ToolOutcome> {
  if (!outcome.fullOutput) return outcome;
  const { fullOutput, ...rest } = outcome;
  // Transcripts are private: 0700 folders, 0600 files (whatever the umask).
  await fsp.mkdir(dir, { recursive: true, mode: 0o700 });
  const name = `${(toolUseId ?? `call_${Date.now()}`).replace(/[^A-Za-z0-9_-]/g, '_')}.txt`;
  const chars = await writeTextFile(path.join(dir, name), fullOutput, undefined, undefined, redact?.());
  return { ...rest, details: { ...rest.details, full_output: { file: name, chars } } };
}

/** A full output as one string (tests and small outputs; a host path writes the pieces as they are). */
export function fullOutputText(full: NonNullable<ToolOutcome['fullOutput']>): string {
  return typeof full === 'string' ? full : full.map((p) => (typeof p === 'string' ? p : p.toString('utf8'))).join('');
}
