import Anser from 'anser';
import { memo } from 'react';

/**
 * Terminal output with its colours: ANSI escapes parsed by anser into spans with classes (the
 * theme colours them). Text only; never markup.
 */
export const AnsiText = memo(function AnsiText({ text, className }: { text: string; className?: string }) {
  const parts = Anser.ansiToJson(text, { use_classes: true, remove_empty: true });
  return (
    <pre className={`ansi ${className ?? ''}`} data-testid="ansi-output">
      {parts.map((p, k) => {
        const cls = [p.fg && `${p.fg}-fg`, p.bg && `${p.bg}-bg`, ...(p.decorations ?? []).map((d) => `ansi-${d}`)].filter(Boolean).join(' ');
        return cls ? (
          <span key={k} className={cls}>
            {p.content}
          </span>
        ) : (
          p.content
        );
      })}
    </pre>
  );
});

/** The text without ANSI escapes (for lengths and plain views). */
export function stripAnsi(text: string): string {
  return Anser.ansiToText(text);
}
