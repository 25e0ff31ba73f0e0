/** Helpers for event summaries: a tool call as `name(key args)`, text of content, durations. */

const ARG_MAX = 80;

export const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

/** The text of a content array (text blocks joined; other blocks named in brackets). */
export function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((block: unknown) => {
      const b = block as { type?: unknown; text?: unknown } | null;
      if (typeof b?.text === 'string') return b.text;
      return typeof b?.type === 'string' ? `[${b.type}]` : '';
    })
    .filter(Boolean)
    .join(' ');
}

/** `850 ms`, `1.2 s`, `3 min 5 s`. */
export function duration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const s = Math.round(ms / 1000);
  return `${Math.floor(s / 60)} min ${s % 60} s`;
}

/** The first line of a text, cut to `max` characters; `…` marks anything left out. */
export function firstLine(text: string, max = ARG_MAX): string {
  const trimmed = text.trim();
  const nl = trimmed.indexOf('\n');
  const line = nl < 0 ? trimmed : trimmed.slice(0, nl).trimEnd();
  if (line.length > max) return `${line.slice(0, max - 1)}…`;
  return nl < 0 ? line : `${line} …`;
}

/** The arguments worth reading for each built-in tool. */
const KEY_ARGS: Record<string, (input: Record<string, unknown>) => string> = {
  bash: (i) => (str(i.command) ? firstLine(i.command as string) : i.restart === true ? 'restart' : ''),
  read: (i) => `${str(i.file_path) ?? '?'}${range(i.view_range)}`,
  write: (i) => str(i.file_path) ?? '?',
  edit: (i) => `${str(i.file_path) ?? '?'}${i.replace_all === true ? ', all' : ''}`,
  glob: (i) => `${str(i.pattern) ?? '?'}${where(i.path)}`,
  grep: (i) => `/${str(i.pattern) ?? ''}/${where(i.path)}`,
};

const where = (path: unknown) => (str(path) ? ` in ${str(path)}` : '');

function range(v: unknown): string {
  if (!Array.isArray(v) || v.length !== 2) return '';
  const [a, b] = v as unknown[];
  return `:${String(a)}-${b === -1 || b === 0 ? 'end' : String(b)}`;
}

/** `bash(ls -la)`, `read(src/a.ts:1-40)`, or up to three `key: value` pairs for other tools; ` on <hand>` when a hand is named. */
export function toolCall(name: unknown, input: unknown): string {
  const tool = str(name) ?? '?';
  const args = (typeof input === 'object' && input !== null && !Array.isArray(input) ? input : {}) as Record<string, unknown>;
  const { hand, ...rest } = args;
  const key = KEY_ARGS[tool];
  const shown = key ? key(rest) : genericArgs(rest);
  return `${tool}(${shown})${str(hand) ? ` on ${str(hand)}` : ''}`;
}

function genericArgs(input: Record<string, unknown>): string {
  const entries = Object.entries(input);
  const parts = entries.slice(0, 3).map(([k, v]) => `${k}: ${typeof v === 'string' ? firstLine(v, 40) : compact(v, 40)}`);
  if (entries.length > 3) parts.push('…');
  return parts.join(', ');
}

function compact(value: unknown, max: number): string {
  let json: string;
  try {
    json = JSON.stringify(value) ?? '';
  } catch {
    return '?';
  }
  return json.length > max ? `${json.slice(0, max - 1)}…` : json;
}
