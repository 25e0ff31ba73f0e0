import fs from 'node:fs';
import type { ToolOutcome } from '../types';
import { cutGrepLine, globToRegExp, MAX_GLOB_RESULTS, MAX_GREP_LINES } from '../tools/glob';
import { looksBinary, withCap } from '../tools/text';
import { WorkDir } from './paths';
import { MAX_WALK_ENTRIES, SKIPPED_DIRS, walk } from './walk';

/**
 * The work of glob and grep once their input is checked: walk, match, list. Synchronous and
 * as large as the tree, so it runs on a worker thread (see search.ts), never on the host's loop.
 */

/** grep skips files bigger than this. */
export const MAX_GREP_FILE_BYTES = 50 * 1024 * 1024;

/** A checked glob call: plain data, so it can be posted to a worker. */
export interface GlobScan {
  kind: 'glob';
  /** The work folder as given (WorkDir.dir). */
  workDir: string;
  /** Real absolute path of the folder to search (inside the work folder). */
  root: string;
  /** How the search folder is named to the model. */
  shown: string;
  pattern: string;
}

/** A checked grep call. */
export interface GrepScan {
  kind: 'grep';
  workDir: string;
  /** Real absolute path of the file or folder to search. */
  root: string;
  shown: string;
  /** Whether `root` is a folder (else one file is searched). */
  rootIsDir: boolean;
  /** JavaScript RegExp source, already known to compile. */
  pattern: string;
}

export function scanGlob(job: GlobScan): ToolOutcome {
  const { pattern, shown } = job;
  const work = new WorkDir(job.workDir);
  const re = globToRegExp(pattern);
  const skip = SKIPPED_DIRS.filter((d) => !pattern.includes(d));
  const { files, stopped } = walk(work, job.root, skip);
  const matches = files.map((f) => work.display(f, job.root)).filter((rel) => re.test(rel)).sort();
  const details = { pattern, root: work.display(job.root), matches: matches.length, listed: Math.min(matches.length, MAX_GLOB_RESULTS), walk_stopped: stopped };
  if (matches.length === 0) {
    return { content: `No files match "${pattern}" under ${shown}.${stopped ? ' (The search stopped early: the tree is very large.)' : ''}`, isError: false, details };
  }
  const lines = matches.slice(0, MAX_GLOB_RESULTS);
  if (matches.length > MAX_GLOB_RESULTS) {
    lines.push(`[… ${(matches.length - MAX_GLOB_RESULTS).toLocaleString('en-US')} more matching files not listed (${matches.length.toLocaleString('en-US')} in all); narrow the pattern or the path]`);
  }
  if (stopped) lines.push(`[the search stopped after ${MAX_WALK_ENTRIES.toLocaleString('en-US')} entries; the tree is very large, narrow the path]`);
  return withCap(lines.join('\n'), details);
}

export function scanGrep(job: GrepScan): ToolOutcome {
  const { pattern, shown } = job;
  const work = new WorkDir(job.workDir);
  const re = new RegExp(pattern);
  const { files, stopped } = job.rootIsDir ? walk(work, job.root, SKIPPED_DIRS) : { files: [job.root], stopped: false };

  const out: string[] = [];
  let total = 0;
  let filesWithMatches = 0;
  let skippedBinary = 0;
  let skippedLarge = 0;
  for (const file of files) {
    let buf: Buffer;
    try {
      if (fs.statSync(file).size > MAX_GREP_FILE_BYTES) {
        skippedLarge++;
        continue;
      }
      buf = work.readFile(file);
    } catch {
      continue;
    }
    if (looksBinary(buf)) {
      skippedBinary++;
      continue;
    }
    const rel = work.display(file);
    const lines = buf.toString('utf8').split('\n');
    let hit = false;
    for (let i = 0; i < lines.length; i++) {
      const line = lines[i]!;
      if (!re.test(line)) continue;
      hit = true;
      total++;
      if (out.length < MAX_GREP_LINES) {
        out.push(cutGrepLine(`${rel}:${i + 1}:`, line));
      }
    }
    if (hit) filesWithMatches++;
  }
  const details = {
    pattern, root: work.display(job.root), matches: total, files_with_matches: filesWithMatches,
    files_searched: files.length, skipped_binary: skippedBinary, skipped_large: skippedLarge, walk_stopped: stopped,
  };
  const notes: string[] = [];
  if (total > MAX_GREP_LINES) notes.push(`[… ${(total - MAX_GREP_LINES).toLocaleString('en-US')} more matching lines not listed (${total.toLocaleString('en-US')} in all); narrow the pattern or the path]`);
  if (skippedLarge > 0) notes.push(`[${skippedLarge} file(s) over ${MAX_GREP_FILE_BYTES / 1024 / 1024} MB were not searched]`);
  if (stopped) notes.push(`[the search stopped after ${MAX_WALK_ENTRIES.toLocaleString('en-US')} entries; the tree is very large, narrow the path]`);
  if (total === 0) {
    return { content: [`No matches for /${pattern}/ in ${shown}.`, ...notes].join('\n'), isError: false, details };
  }
  return withCap([...out, ...notes].join('\n'), details);
}
