import fs from 'node:fs';
import path from 'node:path';
import { capForModel } from '../output-cap';
import type { ToolOutcome } from '../types';
import { looksBinary } from './files';
import { errorOutcome, InputError, optString, reqString } from './input';
import type { WorkDir } from './paths';

export const MAX_GLOB_RESULTS = 1000;
export const MAX_GREP_LINES = 500;
/** Stop walking a tree after this many entries. */
const MAX_WALK_ENTRIES = 200_000;
/** grep skips files bigger than this. */
const MAX_GREP_FILE_BYTES = 50 * 1024 * 1024;
const MAX_GREP_LINE_CHARS = 500;
const SKIPPED_DIRS = ['.git', 'node_modules'];

const REGEX_SPECIAL = /[.*+?^${}()|[\]\\/]/;

/**
 * A glob pattern as an anchored RegExp over `/`-separated relative paths. Supports `**`
 * (any number of folders), `*` and `?` (within one path segment), `{a,b}` (nestable), `[abc]`,
 * `[!abc]` and `\` escapes. `*` also matches names starting with a dot.
 */
export function globToRegExp(pattern: string): RegExp {
  let re = '';
  let depth = 0;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === '\\') {
      const next = pattern[++i];
      if (next !== undefined) re += REGEX_SPECIAL.test(next) ? `\\${next}` : next;
    } else if (c === '*') {
      let j = i;
      while (pattern[j] === '*') j++;
      const prev = i === 0 ? '/' : pattern[i - 1]!;
      const next = j === pattern.length ? '/' : pattern[j]!;
      if (j - i >= 2 && '/{,'.includes(prev) && '/},'.includes(next)) {
        if (pattern[j] === '/') {
          re += '(?:.*/)?';
          j++;
        } else {
          re += '.*';
        }
      } else {
        re += '[^/]*';
      }
      i = j - 1;
    } else if (c === '?') {
      re += '[^/]';
    } else if (c === '{') {
      depth++;
      re += '(?:';
    } else if (c === '}' && depth > 0) {
      depth--;
      re += ')';
    } else if (c === ',' && depth > 0) {
      re += '|';
    } else if (c === '[') {
      const close = pattern.indexOf(']', i + 2);
      if (close === -1) {
        re += '\\[';
      } else {
        let body = pattern.slice(i + 1, close);
        const negate = body.startsWith('!') || body.startsWith('^');
        if (negate) body = body.slice(1);
        re += `[${negate ? '^' : ''}${body.replace(/\\/g, '\\\\').replace(/\//g, '')}]`;
        i = close;
      }
    } else {
      re += REGEX_SPECIAL.test(c) ? `\\${c}` : c;
    }
  }
  if (depth > 0) throw new InputError(`Invalid glob pattern "${pattern}": a "{" is not closed.`);
  return new RegExp(`^${re}$`);
}

interface WalkResult {
  /** Real absolute paths of files (and of symlinks to files inside the work folder). */
  files: string[];
  /** True when the walk stopped early at MAX_WALK_ENTRIES. */
  stopped: boolean;
}

/** All files under `root` (sorted), skipping `skip` folder names and symlinks leading outside. */
function walk(work: WorkDir, root: string, skip: readonly string[]): WalkResult {
  const files: string[] = [];
  const stack = [root];
  let seen = 0;
  while (stack.length > 0) {
    const dir = stack.pop()!;
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(dir, { withFileTypes: true });
    } catch {
      continue; // Unreadable folder: skip it.
    }
    for (const e of entries) {
      if (++seen > MAX_WALK_ENTRIES) return { files: files.sort(), stopped: true };
      const abs = path.join(dir, e.name);
      if (e.isDirectory()) {
        if (!skip.includes(e.name)) stack.push(abs);
      } else if (e.isFile()) {
        files.push(abs);
      } else if (e.isSymbolicLink()) {
        // Symlinked files count when they lead inside the work folder; symlinked folders are not entered.
        try {
          const real = work.resolve(abs);
          if (fs.statSync(real).isFile()) files.push(abs);
        } catch {
          // Outside, dangling or unreadable: leave it out.
        }
      }
    }
  }
  files.sort();
  return { files, stopped: false };
}

/** Resolves the optional `path` input to a search root inside the work folder. */
function searchRoot(work: WorkDir, input: Record<string, unknown>, tool: string): { root: string; shown: string; stat: fs.Stats } | ToolOutcome {
  const given = optString(input, 'path', tool);
  const root = given === undefined || given === '' ? work.real : work.resolve(given);
  const shown = given === undefined || given === '' ? 'the work folder' : given;
  try {
    return { root, shown, stat: fs.statSync(root) };
  } catch {
    return errorOutcome(`Path not found: ${shown}`);
  }
}

function capped(text: string, details: Record<string, unknown>): ToolOutcome {
  const cap = capForModel(text);
  const outcome: ToolOutcome = { content: cap.content, isError: false, details: { ...details, truncated: cap.truncated } };
  if (cap.truncated) outcome.fullOutput = text;
  return outcome;
}

export function globTool(work: WorkDir, input: Record<string, unknown>): ToolOutcome {
  const pattern = reqString(input, 'pattern', 'glob');
  if (pattern === '') throw new InputError('Invalid input for glob: "pattern" is empty.');
  if (pattern.startsWith('/')) {
    throw new InputError('Invalid input for glob: "pattern" must be relative (like "**/*.ts"); use "path" to choose the folder to search.');
  }
  const re = globToRegExp(pattern);
  const where = searchRoot(work, input, 'glob');
  if ('isError' in where) return where;
  if (!where.stat.isDirectory()) return errorOutcome(`${where.shown} is not a directory; "path" must be a folder to search under.`);
  const skip = SKIPPED_DIRS.filter((d) => !pattern.includes(d));
  const { files, stopped } = walk(work, where.root, skip);
  const matches = files.map((f) => work.display(f, where.root)).filter((rel) => re.test(rel)).sort();
  const details = { pattern, root: work.display(where.root), matches: matches.length, listed: Math.min(matches.length, MAX_GLOB_RESULTS), walk_stopped: stopped };
  if (matches.length === 0) {
    return { content: `No files match "${pattern}" under ${where.shown}.${stopped ? ' (The search stopped early: the tree is very large.)' : ''}`, isError: false, details };
  }
  const lines = matches.slice(0, MAX_GLOB_RESULTS);
  if (matches.length > MAX_GLOB_RESULTS) {
    lines.push(`[… ${(matches.length - MAX_GLOB_RESULTS).toLocaleString('en-US')} more matching files not listed (${matches.length.toLocaleString('en-US')} in all); narrow the pattern or the path]`);
  }
  if (stopped) lines.push(`[the search stopped after ${MAX_WALK_ENTRIES.toLocaleString('en-US')} entries; the tree is very large, narrow the path]`);
  return capped(lines.join('\n'), details);
}

export function grepTool(work: WorkDir, input: Record<string, unknown>): ToolOutcome {
  const pattern = reqString(input, 'pattern', 'grep');
  let re: RegExp;
  try {
    re = new RegExp(pattern);
  } catch (err) {
    return errorOutcome(`Invalid regular expression for grep: ${(err as Error).message}. The pattern is JavaScript RegExp source (escape special characters like ( [ { . * + ? with a backslash).`);
  }
  const where = searchRoot(work, input, 'grep');
  if ('isError' in where) return where;
  const { files, stopped } = where.stat.isDirectory() ? walk(work, where.root, SKIPPED_DIRS) : { files: [where.root], stopped: false };

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
        const text = line.length > MAX_GREP_LINE_CHARS ? `${line.slice(0, MAX_GREP_LINE_CHARS)}… [line cut at ${MAX_GREP_LINE_CHARS} characters]` : line;
        out.push(`${rel}:${i + 1}:${text}`);
      }
    }
    if (hit) filesWithMatches++;
  }
  const details = {
    pattern, root: work.display(where.root), matches: total, files_with_matches: filesWithMatches,
    files_searched: files.length, skipped_binary: skippedBinary, skipped_large: skippedLarge, walk_stopped: stopped,
  };
  const notes: string[] = [];
  if (total > MAX_GREP_LINES) notes.push(`[… ${(total - MAX_GREP_LINES).toLocaleString('en-US')} more matching lines not listed (${total.toLocaleString('en-US')} in all); narrow the pattern or the path]`);
  if (skippedLarge > 0) notes.push(`[${skippedLarge} file(s) over ${MAX_GREP_FILE_BYTES / 1024 / 1024} MB were not searched]`);
  if (stopped) notes.push(`[the search stopped after ${MAX_WALK_ENTRIES.toLocaleString('en-US')} entries; the tree is very large, narrow the path]`);
  if (total === 0) {
    return { content: [`No matches for /${pattern}/ in ${where.shown}.`, ...notes].join('\n'), isError: false, details };
  }
  return capped([...out, ...notes].join('\n'), details);
}
