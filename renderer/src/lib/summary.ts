import type { UiEvent } from '../../../main/api/contract';

const MAX = 300;

/** One line saying what an event holds: its text, the tool and input, the error, the reason. */
export function summarise(event: UiEvent): string {
  return oneLine(describe(event));
}

function describe(e: UiEvent): string {
  const text = textOf(e.content);
  if (typeof e.name === 'string' && 'input' in e) return `${e.name} ${compact(e.input)}`;
  if (e.is_error === true) return `error: ${text}`;
  if (text) return text;
  const error = e.error as { type?: unknown; message?: unknown } | undefined;
  if (error && typeof error === 'object') return [error.type, error.message].filter((x) => typeof x === 'string').join(': ');
  const stop = e.stop_reason as { type?: unknown } | null | undefined;
  if (stop && typeof stop.type === 'string') return stop.type;
  if (typeof e.title === 'string') return e.title;
  return '';
}

/** The text of a content array (text blocks joined; other blocks named in brackets). */
function textOf(content: unknown): string {
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

function compact(value: unknown): string {
  try {
    return JSON.stringify(value) ?? '';
  } catch {
    return '';
  }
}

function oneLine(s: string): string {
  const flat = s.replace(/\s+/g, ' ').trim();
  return flat.length > MAX ? `${flat.slice(0, MAX - 1)}…` : flat;
}
