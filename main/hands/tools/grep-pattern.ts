/**
 * grep's pattern is JavaScript RegExp source on every hand. The local hand runs it as such; a
 * remote hand runs its own `grep -E` (GNU, busybox or toybox), whose POSIX extended syntax reads
 * some of the same text differently: `\d` is a plain `d` to GNU grep, so `\d+` silently found
 * every line with a "d" and none with a digit. The pattern is checked as JavaScript first (the
 * same error as on the local hand), then turned into ERE that means the same; what ERE cannot say
 * (lookaround, lazy quantifiers, …) is refused with a message saying so, never run as something else.
 */

const CLASS: Record<string, string> = { d: '0-9', w: '[:alnum:]_', s: '[:space:]' };
/** Characters a backslash escapes outside brackets in JavaScript that ERE also escapes the same way. */
const ERE_SPECIAL = '.[]()*+?{}|^$\\';

/** The JavaScript pattern as ERE, or `{ refused }` saying what ERE cannot do. */
export function jsPatternToEre(pattern: string): { ere: string } | { invalid: string } | { refused: string } {
  try {
    new RegExp(pattern);
  } catch (err) {
    return { invalid: `Invalid regular expression for grep: ${(err as Error).message}. The pattern is JavaScript RegExp source (escape special characters like ( [ { . * + ? with a backslash).` };
  }
  const refuse = (what: string) => ({ refused: `${what} is not supported by grep on this hand (it runs the hand's own grep, POSIX extended regular expressions); rewrite the pattern without it, or search with bash.` });
  let ere = '';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === '\\') {
      const n = pattern[++i]!;
      const lower = n.toLowerCase();
      if (lower in CLASS) ere += `[${n === lower ? '' : '^'}${CLASS[lower]}]`;
      else if (ERE_SPECIAL.includes(n)) ere += `\\${n}`;
      else if (n === '/' || n === '-' || n === ',' || n === ':' || n === '=' || n === '!' || n === '"' || n === "'" || n === ' ' || n === '#' || n === '%' || n === '&' || n === '@' || n === '~' || n === '`' || n === ';' || n === '<' || n === '>') ere += n;
      else if (n === 't') ere += '\t';
      // Word boundaries and back-references: GNU and busybox grep take them as JavaScript does.
      else if (n === 'b' || n === 'B' || /[1-9]/.test(n)) ere += `\\${n}`;
      else return refuse(`The escape \\${n}`);
    } else if (c === '[') {
      // A bracket expression: JavaScript escapes inside it, POSIX has none (a backslash is literal).
      let j = i + 1;
      let body = '';
      if (pattern[j] === '^') (body += '^'), j++;
      let hasClose = false;
      for (; j < pattern.length; j++) {
        const b = pattern[j]!;
        if (b === ']') {
          hasClose = true;
          break;
        }
        if (b !== '\\') {
          if (b === '[' && pattern[j + 1] === ':') return refuse('A "[:" inside brackets');
          body += b;
          continue;
        }
        const n = pattern[++j]!;
        if (n === 'd' || n === 'w' || n === 's') body += CLASS[n];
        else if (n === 't') body += '\t';
        else if ('.*+?(){}|$/,:=!'.includes(n)) body += n;
        else return refuse(`The escape \\${n} inside brackets`);
      }
      if (!hasClose) return refuse('An unclosed "["');
      if (body === '' || body === '^') return refuse('An empty bracket expression');
      ere += `[${body}]`;
      i = j;
    } else if (c === '(' && pattern[i + 1] === '?') {
      if (pattern[i + 2] === ':') {
        ere += '(';
        i += 2;
      } else return refuse('A lookaround or named group "(?"');
    } else if ((c === '*' || c === '+' || c === '?' || c === '}') && pattern[i + 1] === '?') {
      return refuse(`A lazy quantifier "${c}?"`);
    } else {
      ere += c;
    }
  }
  return { ere };
}
