/**
 * grep's pattern is JavaScript RegExp source on every hand; a remote hand runs its own `grep -E`,
 * so the pattern is turned into ERE that means the same, or refused (main/hands/tools/grep-pattern.ts).
 * The remote side is checked end to end in docker-tools.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { jsPatternToEre } from '../../main/hands/tools/grep-pattern';

describe('a JavaScript grep pattern as POSIX ERE', () => {
  it('turns the class escapes ERE reads otherwise into bracket expressions', () => {
    expect(jsPatternToEre('x = \\d+')).toEqual({ ere: 'x = [0-9]+' });
    expect(jsPatternToEre('\\w+\\s*\\S\\D\\W')).toEqual({ ere: '[[:alnum:]_]+[[:space:]]*[^[:space:]][^0-9][^[:alnum:]_]' });
    expect(jsPatternToEre('[\\d\\s.]+')).toEqual({ ere: '[0-9[:space:].]+' });
    expect(jsPatternToEre('(?:ab|cd)\\.\\(\\/x')).toEqual({ ere: '(ab|cd)\\.\\(/x' });
    expect(jsPatternToEre('^\\bfoo\\b$')).toEqual({ ere: '^\\bfoo\\b$' });
    expect(jsPatternToEre('plain text')).toEqual({ ere: 'plain text' });
  });

  it('says the same as the local hand about a pattern that is not valid JavaScript', () => {
    expect(jsPatternToEre('(')).toEqual({ invalid: expect.stringMatching(/^Invalid regular expression for grep: .*Unterminated group/) });
  });

  it('refuses what ERE cannot say, rather than searching for something else', () => {
    for (const p of ['foo(?=bar)', 'a+?', '\\u0041', '[\\]]', '(?<n>x)']) {
      expect(jsPatternToEre(p)).toEqual({ refused: expect.stringMatching(/is not supported by grep on this hand/) });
    }
  });
});
