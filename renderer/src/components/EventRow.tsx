import { memo, type CSSProperties } from 'react';
import type { UiEvent } from '../../../main/api/contract';
import { summarise } from '../lib/summary';
import { clockTime } from '../lib/time';

export const ROW_HEIGHT = 24;

interface Props {
  event: UiEvent;
  top: number;
  selected: boolean;
  onSelect(seq: number): void;
}

/** One event as one fixed-height line: seq, time, type, summary. */
export const EventRow = memo(function EventRow({ event, top, selected, onSelect }: Props) {
  const style: CSSProperties = { transform: `translateY(${top}px)`, height: ROW_HEIGHT };
  const family = event.type.split('.')[0] ?? 'other';
  return (
    <div
      className={`event-row family-${family}${selected ? ' selected' : ''}${event.is_error === true ? ' failed' : ''}`}
      style={style}
      role="listitem"
      aria-current={selected ? 'true' : undefined}
      data-testid="event-row"
      data-seq={event.seq}
      data-type={event.type}
      onClick={() => onSelect(event.seq)}
    >
      <span className="ev-seq">{event.seq}</span>
      <span className="ev-time">{clockTime(event.processed_at)}</span>
      <span className="ev-type">{event.type}</span>
      <span className="ev-summary">{summarise(event)}</span>
    </div>
  );
});
