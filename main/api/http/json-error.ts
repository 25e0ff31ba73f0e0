/**
 * Says where and why a JSON text is malformed without quoting any of it. V8's own JSON.parse
 * messages quote a piece of the input ("Unexpected token 's', "{"key": sk-ant-…"... is not valid
 * JSON"), and a request body may hold a secret, so those messages never reach a client: this
 * scanner finds the first offending position itself and names it by offset, line and column.
 *
 * It runs only after JSON.parse has already failed, on a body the body limit has bounded, and
 * is linear in the text.
 */

/** Where a JSON text first goes wrong, and a fixed description of how (never input bytes). */
export interface JsonSyntaxProblem {
  /** Offset (UTF-16 code units, as JSON.parse counts) of the first character that cannot stand there. */
  position: number;
  line: number;
  column: number;
  reason: string;
}

const WS = new Set([' ', '\t', '\n', '\r']);
const NUMBER = /-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?/y;

/** The first syntax problem in `text`, or undefined when it is valid JSON. */
export function findJsonProblem(text: string): JsonSyntaxProblem | undefined {
  let i = 0;
  const fail = (reason: string): JsonSyntaxProblem => ({ position: i, ...lineAndColumn(text, i), reason });
  const skipWs = () => {
    while (i < text.length && WS.has(text[i]!)) i++;
  };
  const end = () => i >= text.length;

  // Returns a problem or undefined; iterative over containers (a deep body must not overflow the stack).
  const stack: ('{' | '[')[] = [];
  const value = (): JsonSyntaxProblem | undefined => {
    skipWs();
    if (end()) return fail('the body ends where a value should start');
    const ch = text[i]!;
    if (ch === '"') return string();
    if (ch === '-' || (ch >= '0' && ch <= '9')) return number();
    for (const word of ['true', 'false', 'null']) {
      if (text.startsWith(word, i)) {
        i += word.length;
        return undefined;
      }
    }
    return fail('a value cannot start with this character');
  };
  const string = (): JsonSyntaxProblem | undefined => {
    i++; // the opening quote
    while (!end()) {
      const ch = text[i]!;
      if (ch === '"') {
        i++;
        return undefined;
      }
      if (ch < ' ') return fail('a control character inside a string (escape it)');
      if (ch === '\\') {
        const esc = text[i + 1];
        if (esc === 'u') {
          if (!/^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))) {
            i += 1;
            return fail('a \\u escape needs four hex digits');
          }
          i += 6;
          continue;
        }
        if (esc === undefined || !'"\\/bfnrt'.includes(esc)) {
          i += 1;
          return fail('an unknown escape in a string');
        }
        i += 2;
        continue;
      }
      i++;
    }
    return fail('a string is not closed before the body ends');
  };
  const number = (): JsonSyntaxProblem | undefined => {
    NUMBER.lastIndex = i;
    const m = NUMBER.exec(text);
    if (!m) {
      if (text[i] === '-') i++; // a minus sign needs a digit after it
      return fail('a malformed number');
    }
    i += m[0].length;
    return undefined;
  };

  // The grammar as a loop: after each value, close containers or expect a separator.
  let expectValue = true;
  for (;;) {
    if (expectValue) {
      skipWs();
      if (text[i] === '{' || text[i] === '[') {
        const open = text[i] as '{' | '[';
        i++;
        skipWs();
        if (text[i] === (open === '{' ? '}' : ']')) {
          i++;
          expectValue = false;
          continue;
        }
        stack.push(open);
        if (open === '{') {
          const key = objectKey();
          if (key) return key;
        }
        continue;
      }
      const problem = value();
      if (problem) return problem;
      expectValue = false;
      continue;
    }
    skipWs();
    const top = stack[stack.length - 1];
    if (top === undefined) return end() ? undefined : fail('more text after the JSON value');
    if (end()) return fail(`the body ends inside ${top === '{' ? 'an object' : 'an array'}`);
    const ch = text[i]!;
    if (ch === ',') {
      i++;
      if (top === '{') {
        skipWs();
        const key = objectKey();
        if (key) return key;
      }
      expectValue = true;
      continue;
    }
    if (ch === (top === '{' ? '}' : ']')) {
      i++;
      stack.pop();
      continue;
    }
    return fail(top === '{' ? "expected ',' or '}' after a property's value" : "expected ',' or ']' after an array element");
  }

  // A property name and its colon; leaves the scanner expecting the value.
  function objectKey(): JsonSyntaxProblem | undefined {
    skipWs();
    if (end()) return fail('the body ends inside an object');
    if (text[i] !== '"') return fail('expected a property name in double quotes');
    const problem = string();
    if (problem) return problem;
    skipWs();
    if (text[i] !== ':') return fail("expected ':' after a property name");
    i++;
    expectValue = true;
    return undefined;
  }
}

function lineAndColumn(text: string, pos: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  for (let k = 0; k < pos && k < text.length; k++) {
    if (text.charCodeAt(k) === 10) {
      line++;
      lineStart = k + 1;
    }
  }
  return { line, column: pos - lineStart + 1 };
}

/** The message for a body JSON.parse refused: where and why, never a byte of the body. */
export function describeJsonProblem(text: string): string {
  const p = findJsonProblem(text);
  // JSON.parse and the scanner disagree only on inputs neither should see; say nothing more then.
  if (!p) return 'the body is not valid JSON';
  return `the body is not valid JSON: ${p.reason} at position ${p.position} (line ${p.line}, column ${p.column})`;
}
