import { InputError } from './input';

/** Glob matching and the result limits of glob and grep, the same on every hand. */

export const MAX_GLOB_RESULTS = 1000;
export const MAX_GREP_LINES = 500;
/** A matching line longer than this is cut in grep's result (a minified file is one huge line). */
export const MAX_GREP_LINE_CHARS = 500;

/** A grep result line `path:line:text` with its text cut at MAX_GREP_LINE_CHARS, saying so. */
export function cutGrepLine(prefix: string, text: string): string {
  return text.length > MAX_GREP_LINE_CHARS ? `${prefix}${text.slice(0, MAX_GREP_LINE_CHARS)}… [line cut at ${MAX_GREP_LINE_CHARS} characters]` : prefix + text;
}
const REGEX_SPECIAL = /[.*+?^${}()|[\]\\/]/;

/** Checks glob's pattern as every hand does: not empty, relative, no `..` (a bad one throws InputError). */
export function checkGlobPattern(pattern: string): RegExp {
  if (pattern === '') throw new InputError('Invalid input for glob: "pattern" is empty.');
  if (pattern.startsWith('/')) {
    throw new InputError('Invalid input for glob: "pattern" must be relative (like "**/*.ts"); use "path" to choose the folder to search.');
  }
  return globToRegExp(pattern);
}

/**
 * A glob pattern as an anchored RegExp over `/`-separated relative paths. Supports `**`
 * (any number of folders), `*` and `?` (within one path segment), `{a,b}` (nestable), `[abc]`,
 * `[!abc]` and `\` escapes. `*` also matches names starting with a dot.
 */
export function globToRegExp(pattern: string): RegExp {
  // As the reference toolset does: a ".." segment (also inside braces) could only match outside
  // the search folder, so say so rather than answer "no files match".
  if (pattern.split(/[\\/{},]/).includes('..')) {
    throw new InputError(`Invalid glob pattern "${pattern}": ".." is not permitted in the pattern; use "path" to choose the folder to search.`);
  }
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
