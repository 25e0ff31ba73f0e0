import { memo, type CSSProperties, type MouseEvent } from 'react';
import type { UiEvent } from '../../../../main/api/ui/contract';
import type { Kind } from '../../lib/session-index';
import { summarise, type Summary } from '../../lib/summary';
import { clockTime } from '../../lib/time';

export const ROW_HEIGHT = 24;

interface Props {
  event: UiEvent;
  kind: Kind;
  top: number;
  /** The cursor is on it. */
  current: boolean;
  /** After the cursor: not yet happened at the position shown. */
  future: boolean;
  inSlice: boolean;
  /** Sessions forked at this event. */
  forks: number;
  onPick(seq: number, e: MouseEvent): void;
}

/** One event as one fixed-height line: seq, time, type, summary (with its badge and note), coloured by kind. */
export const EventRow = memo(function EventRow({ event, kind, top, current, future, inSlice, forks, onPick }: Props) {
  const style: CSSProperties = { transform: `translateY(${top}px)`, height: ROW_HEIGHT };
  const family = event.type.split('.')[0] ?? 'other';
  const summary = summarise(event);
  const failed = event.is_error === true || summary.tone === 'error';
  const cls = ['event-row', `family-${family}`, `kind-${kind}`, current && 'selected', failed && 'failed', future && 'future', inSlice && 'in-slice'].filter(Boolean).join(' ');
  return (
    <div
      className={cls}
      style={style}
      role="option"
      id={`ev-${event.seq}`}
      aria-selected={current}
      aria-current={current ? 'true' : undefined}
      aria-label={`#${event.seq} ${event.type}: ${summary.text}`}
      data-testid="event-row"
      data-seq={event.seq}
      data-event-id={event.id}
      data-type={event.type}
      onClick={(e) => onPick(event.seq, e)}
    >
      <span className="ev-kind" aria-hidden="true" />
      <span className="ev-seq">{event.seq}</span>
      <span className="ev-time">{clockTime(event.processed_at)}</span>
      <span className="ev-type">{event.type}</span>
      <SummaryLine summary={summary} />
      {forks > 0 && (
        <span className="badge badge-fork" title={`${forks} fork${forks === 1 ? '' : 's'} made here`} data-testid="fork-mark">
          ↳ {forks}
        </span>
      )}
    </div>
  );
});

function SummaryLine({ summary }: { summary: Summary }) {
  return (
    <span className="ev-summary" data-testid="event-summary">
      <span className="ev-text">{summary.text}</span>
      {summary.badge && (
        <span className={`badge badge-${summary.badge.tone}`} data-testid="event-badge">
          {summary.badge.text}
        </span>
      )}
      {summary.note && <span className="ev-note">{summary.note}</span>}
    </span>
  );
}

/** The line that opens a turn: its number, its first message, and a toggle to fold it. */
export const TurnRow = memo(function TurnRow({ turn, text, top, collapsed, events, onToggle }: { turn: number; text: string; top: number; collapsed: boolean; events: number; onToggle(turn: number): void }) {
  return (
    <div
      className={`turn-row${collapsed ? ' collapsed' : ''}`}
      style={{ transform: `translateY(${top}px)`, height: ROW_HEIGHT }}
      role="option"
      aria-selected={false}
      aria-expanded={!collapsed}
      aria-label={`Turn ${turn}${collapsed ? ' (folded)' : ''}: ${text}`}
      data-testid="turn-row"
      data-turn={turn}
      onClick={() => onToggle(turn)}
    >
      <span className="turn-toggle" aria-hidden="true">
        {collapsed ? '▸' : '▾'}
      </span>
      <span className="turn-label">Turn {turn}</span>
      <span className="turn-text">{text}</span>
      <span className="muted">{events} events</span>
    </div>
  );
});
