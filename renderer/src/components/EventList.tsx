import { useVirtualizer } from '@tanstack/react-virtual';
import { useCallback, useLayoutEffect, useRef, useState } from 'react';
import type { UiEvent } from '../../../main/api/contract';
import { EventRow, ROW_HEIGHT } from './EventRow';

interface Props {
  events: readonly UiEvent[];
  selectedSeq: number | null;
  onSelect(seq: number): void;
}

/**
 * The event timeline: virtualised fixed-height rows. Follows the tail while the view is at the
 * bottom; scrolling up stops following, scrolling back down (or the button) resumes it.
 */
export function EventList({ events, selectedSeq, onSelect }: Props) {
  const scrollRef = useRef<HTMLDivElement>(null);
  const [follow, setFollow] = useState(true);
  const virtualizer = useVirtualizer({
    count: events.length,
    getScrollElement: () => scrollRef.current,
    estimateSize: () => ROW_HEIGHT,
    getItemKey: (index) => events[index]?.seq ?? index,
    overscan: 16,
  });

  const toBottom = useCallback(() => {
    const el = scrollRef.current;
    if (el) el.scrollTop = el.scrollHeight;
  }, []);

  // New events while following: stay at the bottom. Runs after the list's height has grown.
  useLayoutEffect(() => {
    if (follow) toBottom();
  }, [events.length, follow, toBottom]);

  const onScroll = () => {
    const el = scrollRef.current;
    if (!el) return;
    const atBottom = el.scrollHeight - el.scrollTop - el.clientHeight <= ROW_HEIGHT / 2;
    setFollow(atBottom);
  };

  return (
    <div className="event-list-wrap">
      <div className="event-list" ref={scrollRef} onScroll={onScroll} data-testid="event-list" data-follow={follow} role="grid" aria-rowcount={events.length}>
        <div className="event-list-inner" style={{ height: virtualizer.getTotalSize() }}>
          {virtualizer.getVirtualItems().map((item) => {
            const event = events[item.index];
            return event ? <EventRow key={item.key} event={event} top={item.start} selected={event.seq === selectedSeq} onSelect={onSelect} /> : null;
          })}
        </div>
      </div>
      {!follow && (
        <button type="button" className="jump-latest" data-testid="follow-tail" onClick={() => setFollow(true)}>
          ↓ Latest
        </button>
      )}
    </div>
  );
}
