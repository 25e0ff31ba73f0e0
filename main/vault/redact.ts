/**
 * Redaction of secret values in text: every vault value, and the encoded forms it takes in
 * logs, URLs, JSON and HTTP headers, is replaced by a marker naming the credential (never the
 * value). One RegExp of the escaped forms, longest first, rebuilt when the vault changes.
 */

/** A secret and the name its marker shows. */
export interface SecretEntry {
  /** What the marker says, e.g. `credential deploy-token`. */
  label: string;
  values: readonly string[];
}

/** Values shorter than this are not redacted (they would blank out ordinary words). */
export const MIN_REDACTED_CHARS = 4;
/** Base64 fragments shorter than this are not matched (random base64 would hit them). */
const MIN_BASE64_CORE_CHARS = 8;

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * The forms a value takes in text: itself; JSON-escaped; URL-encoded (upper- and lower-case
 * hex, and with `+` for spaces); base64 and base64url of it at each of the three byte
 * alignments — the characters that depend only on the value — so it is also found inside
 * the base64 of a longer string such as `user:value` (HTTP Basic), whatever precedes it.
 */
export function secretForms(value: string): string[] {
  if (value.length < MIN_REDACTED_CHARS) return [];
  const forms = new Set<string>([value]);
  forms.add(JSON.stringify(value).slice(1, -1));
  const url = encodeURIComponent(value);
  forms.add(url);
  forms.add(url.replace(/%[0-9A-F]{2}/g, (h) => h.toLowerCase()));
  forms.add(url.replace(/%20/g, '+'));
  const bytes = Buffer.from(value, 'utf8');
  for (let shift = 0; shift < 3; shift++) {
    const b64 = Buffer.concat([Buffer.alloc(shift), bytes]).toString('base64');
    const core = b64.slice(Math.ceil((8 * shift) / 6), Math.floor((8 * (shift + bytes.length)) / 6));
    if (core.length < MIN_BASE64_CORE_CHARS) continue;
    forms.add(core);
    forms.add(core.replace(/\+/g, '-').replace(/\//g, '_'));
  }
  return [...forms].filter((f) => f.length >= MIN_REDACTED_CHARS);
}

export const marker = (label: string) => `[redacted: ${label}]`;

/** Replaces secret values in text and in the strings of JSON-like values. Immutable. */
export class Redactor {
  /** Length of the longest form: a stream holds back one less than this. */
  readonly longest: number;
  private readonly pattern: RegExp | undefined;
  private readonly labelOf: Map<string, string>;

  constructor(entries: readonly SecretEntry[]) {
    this.labelOf = new Map();
    for (const entry of entries) {
      for (const v of entry.values) for (const f of secretForms(v)) if (!this.labelOf.has(f)) this.labelOf.set(f, entry.label);
    }
    // Longest first: where one form is a prefix of another, the longer one wins.
    const forms = [...this.labelOf.keys()].sort((a, b) => b.length - a.length || (a < b ? -1 : 1));
    this.longest = forms[0]?.length ?? 0;
    this.pattern = forms.length ? new RegExp(forms.map(escapeRegExp).join('|'), 'g') : undefined;
  }

  static readonly empty = new Redactor([]);

  /** Whether any secret is known (no secret: every method returns its input). */
  get active(): boolean {
    return this.pattern !== undefined;
  }

  redact(text: string): string {
    if (!this.pattern || text.length < MIN_REDACTED_CHARS) return text;
    return text.replace(this.pattern, (m) => marker(this.labelOf.get(m) ?? 'secret'));
  }

  /** A copy of a JSON-like value with every string (not keys) redacted. */
  redactValue<T>(value: T): T {
    if (!this.pattern) return value;
    return this.walk(value) as T;
  }

  private walk(v: unknown): unknown {
    if (typeof v === 'string') return this.redact(v);
    if (Array.isArray(v)) return v.map((x) => this.walk(x));
    if (v && typeof v === 'object' && Object.getPrototypeOf(v) === Object.prototype) {
      const out: Record<string, unknown> = {};
      for (const [k, x] of Object.entries(v)) out[k] = this.walk(x);
      return out;
    }
    return v;
  }

  /** A redactor for text that arrives in pieces (live model output). */
  stream(): StreamRedactor {
    return new StreamRedactor(this);
  }

  /** @internal Redacts `text`, returning how much of it is final: text before `safe` that no later chunk can change. */
  redactPrefix(text: string, safe: number): { out: string; consumed: number } {
    if (!this.pattern) return { out: text.slice(0, safe), consumed: safe };
    const re = new RegExp(this.pattern.source, 'g');
    let out = '';
    let at = 0;
    for (let m = re.exec(text); m && m.index < safe; m = re.exec(text)) {
      out += text.slice(at, m.index) + marker(this.labelOf.get(m[0]) ?? 'secret');
      at = m.index + m[0].length;
    }
    const end = Math.max(at, safe);
    return { out: out + text.slice(at, end), consumed: end };
  }
}

/**
 * Redacts a stream of text chunks: holds back the last (longest form − 1) characters, since a
 * secret may be split across chunks, and lets the rest through redacted.
 */
export class StreamRedactor {
  private held = '';
  constructor(private readonly redactor: Redactor) {}

  /** The text that can be shown now (possibly empty). */
  push(chunk: string): string {
    const text = this.held + chunk;
    const safe = Math.max(0, text.length - Math.max(0, this.redactor.longest - 1));
    const { out, consumed } = this.redactor.redactPrefix(text, safe);
    this.held = text.slice(consumed);
    return out;
  }

  /** Whatever is held back, redacted: the stream has ended. */
  end(): string {
    const rest = this.redactor.redact(this.held);
    this.held = '';
    return rest;
  }
}
