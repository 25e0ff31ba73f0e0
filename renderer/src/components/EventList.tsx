import { useVirtualizer } from '@tanstack/react-virtual';
import { useCallback, useLayoutEffect, useRef, useState, type KeyboardEvent, type WheelEvent } from 'react';
import type { UiEvent } from '../../../main/api/ui/contract';
import type { LiveText } from '../state/timeline';
import { EventRow, ROW_HEIGHT } from './EventRow';
import { LiveTextRow } from './LiveTextRow';

interface Props {
  events: readonly UiEvent[];
  /** Events being written now: rows after the logged ones, until each is logged. */
  live: readonly LiveText[];
  selectedSeq: number | null;
  onSelect(seq: number): void;
}

/**
 * The event timeline: virtualised fixed-height rows, the live text at the tail. Follows the tail
 * while the view is at the bottom; scrolling up stops following, scrolling back down (or the
 * button) resumes it.
 */
export function EventList({ events, live, selectedSeq, onSelect }: Props) {
  const scrollRef = useRef<HTMLDivElement>(null);
  const [follow, setFollow] = useState(true);
  const count = events.length + live.length;
  const virtualizer = useVirtualizer({
    count,
    getScrollElement: () => scrollRef.current,
    estimateSize: () => ROW_HEIGHT,
    getItemKey: (index) => events[index]?.seq ?? `live:${live[index - events.length]?.id ?? index}`,
    overscan: 16,
  });

  const toBottom = useCallback(() => {
    const el = scrollRef.current;
    if (el) el.scrollTop = el.scrollHeight;
  }, []);

  // New events while following: stay at the bottom. Runs after the list's height has grown.
  useLayoutEffect(() => {
    if (follow) toBottom();
  }, [count, follow, toBottom]);

  // Scroll events arrive a frame late, when more rows may already have made the list taller,
  // so "not at the bottom" alone does not mean the user left it: only a move up does.
  const lastTop = useRef(0);
  const onScroll = () => {
    const el = scrollRef.current;
    if (!el) return;
    const movedUp = el.scrollTop < lastTop.current - 1;
    lastTop.current = el.scrollTop;
    if (el.scrollHeight - el.scrollTop - el.clientHeight <= ROW_HEIGHT / 2) setFollow(true);
    else if (movedUp) setFollow(false);
  };
  // While rows stream in, a scroll up can be undone by the next append before its scroll event
  // fires; the wheel and the keys say what the user meant at once.
  const onWheel = (e: WheelEvent<HTMLDivElement>) => {
    if (e.deltaY < 0 && e.currentTarget.scrollTop > 0) setFollow(false);
  };
  const onKeyDown = (e: KeyboardEvent<HTMLDivElement>) => {
    if ((e.key === 'ArrowUp' || e.key === 'PageUp' || e.key === 'Home') && e.currentTarget.scrollTop > 0) setFollow(false);
  };

  return (
    <div className="event-list-wrap">
      <div
        className="event-list"
        ref={scrollRef}
        onScroll={onScroll}
        onWheel={onWheel}
        onKeyDown={onKeyDown}
        tabIndex={0}
        role="list"
        aria-label={`Events (${events.length})`}
        data-testid="event-list"
        data-follow={follow}
      >
        <div className="event-list-inner" style={{ height: virtualizer.getTotalSize() }}>
          {virtualizer.getVirtualItems().map((item) => {
            const event = events[item.index];
            if (event) return <EventRow key={item.key} event={event} top={item.start} selected={event.seq === selectedSeq} onSelect={onSelect} />;
            const text = live[item.index - events.length];
            return text ? <LiveTextRow key={item.key} live={text} top={item.start} /> : null;
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
