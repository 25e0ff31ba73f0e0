import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findJsonProblem } from '../../main/api/http/json-error';
import { startTestServer, type TestServer } from '../helpers/server';

// A secret-looking string planted in malformed bodies: no answer may contain any piece of it.
const SECRET = 'sk-ant-api03-PLANTEDsecretVALUE0123456789abcdef';
const PIECE = /PLANTED|secretVALUE|0123456789abcdef|sk-ant/;

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(() => t.close());

const post = (path: string, body: string) =>
  fetch(`${t.server.url}${path}`, { method: 'POST', body, headers: { 'x-api-key': t.apiKey, 'content-type': 'application/json' } });

describe('malformed JSON bodies', () => {
  // Each breaks at a different spot around the secret; V8's message quoted the text there.
  const bodies = [
    `{"name": ${SECRET}}`, // unquoted: V8 says "Unexpected token 's', "{"name": sk-ant-…"
    `{"name": "a", "token": "${SECRET}" ${SECRET}}`,
    `{"name": "${SECRET}\n"}`, // a raw newline inside a string
    `{"name": "${SECRET}"`, // cut short
    `[${SECRET}]`,
    `{"name": "a"} ${SECRET}`,
    `{${SECRET}: 1}`,
    `{"name": "\\q${SECRET}"}`,
  ];

  it('answers 400 with the position and never a byte of the body', async () => {
    for (const body of bodies) {
      expect(() => JSON.parse(body), body).toThrow();
      for (const path of ['/v1/agents', '/v1/environments']) {
        const res = await post(path, body);
        expect(res.status, body).toBe(400);
        const text = await res.text();
        expect(text, body).not.toMatch(PIECE);
        const message = (JSON.parse(text) as { error: { message: string } }).error.message;
        expect(message).toMatch(/^the body is not valid JSON: .* at position \d+ \(line \d+, column \d+\)$/);
      }
    }
  });

  it('points at the first character that cannot stand there', () => {
    const cases: [string, number, RegExp][] = [
      ['{"a": x}', 6, /value cannot start/],
      ['{"a":1', 6, /ends inside an object/],
      ['{"a":1}x', 7, /more text/],
      ['[1,]', 3, /value cannot start/],
      ['{a:1}', 1, /property name/],
      ['{"a" 1}', 5, /':'/],
      ['"ab\ncd"', 3, /control character/],
      ['"abc', 4, /not closed/],
      ['[1 2]', 3, /',' or ']'/],
      ['{"a":"\\u12g4"}', 7, /four hex digits/],
      ['-', 1, /malformed number/],
      ['', 0, /ends where a value/],
      ['{"a":[1,{"b":null}],"c":tru}', 24, /value cannot start/],
    ];
    for (const [text, position, reason] of cases) {
      const p = findJsonProblem(text);
      expect(p, text).toBeDefined();
      expect(p!.position, text).toBe(position);
      expect(p!.reason, text).toMatch(reason);
      // V8 agrees that it is malformed.
      expect(() => JSON.parse(text), text).toThrow();
    }
    expect(findJsonProblem('\n\n  {"a": x}')).toMatchObject({ line: 3, column: 9 });
  });

  it('finds nothing wrong in valid JSON, however deep', () => {
    for (const text of ['{}', '[]', ' 1 ', '"\\u00e9\\n"', '{"a":[1,-2.5e3,true,false,null,{"b":"c"}]}', '['.repeat(5000) + ']'.repeat(5000)]) {
      expect(findJsonProblem(text), text).toBeUndefined();
    }
  });
});
