import { describe, expect, it } from 'vitest';
import { Redactor, secretForms } from '../../main/vault/redact';

const SECRET = 'ghp_s3cr3t/Value+with=odd&chars"\\';
const r = new Redactor([{ label: 'credential deploy', values: [SECRET] }]);
const M = '[redacted: credential deploy]';

const b64 = (s: string) => Buffer.from(s).toString('base64');
const b64url = (s: string) => Buffer.from(s).toString('base64url');

describe('Redactor', () => {
  it('replaces the value and its encoded forms with a marker naming the credential', () => {
    expect(r.redact(`token=${SECRET}; end`)).toBe(`token=${M}; end`);
    // JSON-escaped (quotes and backslashes), as a tool printing JSON shows it.
    const json = JSON.stringify({ token: SECRET });
    expect(json).not.toContain(SECRET);
    expect(r.redact(json)).toBe(`{"token":"${M}"}`);
    // URL-encoded, upper- and lower-case hex, and with + for spaces.
    const url = encodeURIComponent(SECRET);
    expect(r.redact(`https://x.example/?t=${url}`)).toBe(`https://x.example/?t=${M}`);
    expect(r.redact(`?t=${url.replace(/%[0-9A-F]{2}/g, (h) => h.toLowerCase())}`)).toBe(`?t=${M}`);
    // base64 and base64url of the value alone: nothing of the value is left to decode.
    for (const enc of [b64(SECRET), b64url(SECRET)]) {
      const out = r.redact(`x ${enc} y`);
      expect(out).toContain(M);
      expect(out).not.toContain(enc.slice(4, -4));
    }
  });

  it('finds the value inside the base64 of user:value, whatever the user name (HTTP Basic)', () => {
    for (const user of ['', 'a', 'ab', 'x-access-token', 'oauth2', 'someone@example.com']) {
      const header = `Authorization: Basic ${b64(`${user}:${SECRET}`)}`;
      const out = r.redact(header);
      expect(out, user).toContain(M);
      // What is left cannot be decoded back to the value.
      const left = out.replace('Authorization: Basic ', '').split(M).join('');
      expect(Buffer.from(left, 'base64').toString('latin1')).not.toContain(SECRET.slice(2, -2));
    }
  });

  it('leaves text without secrets alone, and ignores values too short to redact safely', () => {
    expect(r.redact('nothing here')).toBe('nothing here');
    const short = new Redactor([{ label: 'x', values: ['abc'] }]);
    expect(short.active).toBe(false);
    expect(short.redact('abc abc')).toBe('abc abc');
    expect(Redactor.empty.redactValue({ a: 1 })).toEqual({ a: 1 });
  });

  it('prefers the longer of two secrets where one contains the other, and redacts overlapping ones', () => {
    const two = new Redactor([
      { label: 'short', values: ['abcdefgh'] },
      { label: 'long', values: ['abcdefgh-ijklmnop'] },
    ]);
    expect(two.redact('[abcdefgh-ijklmnop] [abcdefgh]')).toBe('[[redacted: long]] [[redacted: short]]');
    const overlap = new Redactor([
      { label: 'A', values: ['12345678AB'] },
      { label: 'B', values: ['78ABCDEFGH'] },
    ]);
    const out = overlap.redact('x12345678ABCDEFGHx');
    expect(out).not.toContain('12345678AB');
    expect(out).not.toContain('78ABCDEFGH');
  });

  it('redacts every string of an event, keeping its shape', () => {
    const event = { type: 'agent.tool_result', content: [{ type: 'text', text: `out: ${SECRET}` }], n: 3, ok: true, nothing: null };
    const out = r.redactValue(event);
    expect(out).toEqual({ type: 'agent.tool_result', content: [{ type: 'text', text: `out: ${M}` }], n: 3, ok: true, nothing: null });
    expect(event.content[0]!.text).toContain(SECRET); // the input is not changed
  });

  it('stream: a secret split at any point across chunks never comes out, and the text adds up', () => {
    const text = `before ${SECRET} middle ${b64(`user:${SECRET}`)} after`;
    const whole = r.redact(text);
    for (let cut1 = 0; cut1 <= text.length; cut1 += 3) {
      for (const cut2 of [cut1 + 1, cut1 + 7, text.length]) {
        const s = r.stream();
        const pieces = [text.slice(0, cut1), text.slice(cut1, cut2), text.slice(cut2)].map((p) => s.push(p));
        pieces.push(s.end());
        expect(pieces.join(''), `cuts ${cut1}/${cut2}`).toBe(whole);
        for (const p of pieces) expect(p).not.toContain(SECRET.slice(0, 12));
      }
    }
  });

  it('stream: one character at a time holds back no more than the longest form', () => {
    const s = r.stream();
    let out = '';
    const text = `a${SECRET}b`.repeat(3) + 'z'.repeat(200);
    for (const ch of text) out += s.push(ch);
    // By the end of the trailing text, everything but the held-back tail is out.
    expect(text.length - out.replace(/\[redacted: credential deploy\]/g, '#'.repeat(SECRET.length)).length).toBeLessThan(r.longest);
    out += s.end();
    expect(out).toBe(r.redact(text));
  });

  it('forms include JSON, URL and base64 variants and nothing shorter than the minimum', () => {
    const forms = secretForms('pass word"1');
    expect(forms).toContain('pass word"1');
    expect(forms).toContain('pass word\\"1');
    expect(forms).toContain('pass%20word%221');
    expect(forms).toContain('pass+word%221');
    expect(forms.every((f) => f.length >= 4)).toBe(true);
  });

  it('is fast enough for large tool output', () => {
    const many = new Redactor(Array.from({ length: 50 }, (_, i) => ({ label: `c${i}`, values: [`secret-value-number-${i}-${'x'.repeat(i)}`] })));
    const big = 'lorem ipsum dolor sit amet '.repeat(40_000); // ~1 MB
    const t0 = performance.now();
    many.redact(big);
    const ms = performance.now() - t0;
    console.log(`redact: 1 MB against 50 secrets (${many.longest} chars longest form) in ${ms.toFixed(0)} ms`);
    expect(ms).toBeLessThan(2000);
  });
});
