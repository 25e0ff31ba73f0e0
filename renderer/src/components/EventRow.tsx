import { memo, type CSSProperties } from 'react';
import type { UiEvent } from '../../../main/api/ui/contract';
import { summarise, type Summary } from '../lib/summary';
import { clockTime } from '../lib/time';

export const ROW_HEIGHT = 24;

interface Props {
  event: UiEvent;
  top: number;
  selected: boolean;
  onSelect(seq: number): void;
}

/** One event as one fixed-height line: seq, time, type, summary (with its badge and note). */
export const EventRow = memo(function EventRow({ event, top, selected, onSelect }: Props) {
  const style: CSSProperties = { transform: `translateY(${top}px)`, height: ROW_HEIGHT };
  const family = event.type.split('.')[0] ?? 'other';
  const summary = summarise(event);
  const failed = event.is_error === true || summary.tone === 'error';
  return (
    <div
      className={`event-row family-${family}${selected ? ' selected' : ''}${failed ? ' failed' : ''}`}
      style={style}
      role="listitem"
      aria-current={selected ? 'true' : undefined}
      data-testid="event-row"
      data-seq={event.seq}
      data-event-id={event.id}
      data-type={event.type}
      onClick={() => onSelect(event.seq)}
    >
      <span className="ev-seq">{event.seq}</span>
      <span className="ev-time">{clockTime(event.processed_at)}</span>
      <span className="ev-type">{event.type}</span>
      <SummaryLine summary={summary} />
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
