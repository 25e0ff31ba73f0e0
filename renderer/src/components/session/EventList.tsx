import { useVirtualizer } from '@tanstack/react-virtual';
import { useCallback, useEffect, useLayoutEffect, useRef, useState, type KeyboardEvent, type MouseEvent, type WheelEvent } from 'react';
import type { UiEvent } from '../../../../main/api/ui/contract';
import type { RowModel } from '../../lib/rows';
import { indexAtOrBefore, type SessionIndex } from '../../lib/session-index';
import { summarise } from '../../lib/summary';
import type { LiveText } from '../../state/timeline';
import { setFilters, useView } from '../../state/view';
import { EventRow, ROW_HEIGHT, TurnRow } from './EventRow';
import { LaneCanvas } from './LaneCanvas';
import { LiveTextRow } from './LiveTextRow';

interface Props {
  events: readonly UiEvent[];
  live: readonly LiveText[];
  index: SessionIndex;
  rows: RowModel;
  /** Changes whenever the rows do. */
  rowsVersion: number;
  forkPoints: ReadonlyMap<number, number>;
  onPick(seq: number, e: MouseEvent | KeyboardEvent): void;
}

/**
 * The event timeline: virtualised fixed-height rows (turn headers, events, live text at the
 * tail) with the hands' lanes drawn beside them. Follows the tail while the cursor is live and
 * the view is at the bottom; scrolling up stops following, the button resumes it. A cursor set
 * elsewhere (scrubber, keys) scrolls its row into view.
 */
export function EventList({ events, live, index, rows, rowsVersion, forkPoints, onPick }: Props) {
  const scrollRef = useRef<HTMLDivElement>(null);
  const [follow, setFollow] = useState(true);
  const cursor = useView((s) => s.cursor);
  const slice = useView((s) => s.slice);
  const collapsed = useView((s) => s.filters.collapsed);
  const count = rows.count + live.length;
  const virtualizer = useVirtualizer({
    count,
    getScrollElement: () => scrollRef.current,
    estimateSize: () => ROW_HEIGHT,
    getItemKey: (r) => (r < rows.count ? (rows.header[r] ? `t${index.turnOf[rows.index[r]!]}` : (events[rows.index[r]!]?.seq ?? r)) : `live:${live[r - rows.count]?.id ?? r}`),
    overscan: 12,
  });

  const toBottom = useCallback(() => {
    const el = scrollRef.current;
    if (el) el.scrollTop = el.scrollHeight;
  }, []);
  const following = follow && cursor === null;
  useLayoutEffect(() => {
    if (following) toBottom();
  }, [count, following, toBottom, rowsVersion]);

  // A cursor moved from elsewhere brings its row into view.
  const cursorIndex = cursor === null ? -1 : indexAtOrBefore(events, cursor);
  useEffect(() => {
    if (cursorIndex < 0) return;
    const r = rows.rowOf(cursorIndex);
    const el = scrollRef.current;
    if (!el) return;
    const top = r * ROW_HEIGHT;
    if (top < el.scrollTop || top + ROW_HEIGHT > el.scrollTop + el.clientHeight) el.scrollTop = Math.max(0, top - el.clientHeight / 2);
  }, [cursorIndex, rows, rowsVersion]);

  const lastTop = useRef(0);
  const [scrollTop, setScrollTop] = useState(0);
  const onScroll = () => {
    const el = scrollRef.current;
    if (!el) return;
    setScrollTop(el.scrollTop);
    const movedUp = el.scrollTop < lastTop.current - 1;
    lastTop.current = el.scrollTop;
    if (el.scrollHeight - el.scrollTop - el.clientHeight <= ROW_HEIGHT / 2) setFollow(true);
    else if (movedUp) setFollow(false);
  };
  const onWheel = (e: WheelEvent<HTMLDivElement>) => {
    if (e.deltaY < 0 && e.currentTarget.scrollTop > 0) setFollow(false);
  };
  const onKeyDown = (e: KeyboardEvent<HTMLDivElement>) => {
    if ((e.key === 'PageUp' || e.key === 'Home') && e.currentTarget.scrollTop > 0) setFollow(false);
    if (e.key === 'ArrowUp' || e.key === 'ArrowDown') {
      e.preventDefault();
      const at = cursorIndex < 0 ? index.count - 1 : cursorIndex;
      const next = Math.max(0, Math.min(index.count - 1, at + (e.key === 'ArrowUp' ? -1 : 1)));
      if (events[next]) useView.setState({ cursor: events[next].seq });
    } else if (e.key === 'Enter' && cursorIndex >= 0) onPick(events[cursorIndex]!.seq, e);
  };
  const toggleTurn = useCallback((turn: number) => {
    const c = useView.getState().filters.collapsed;
    setFilters({ collapsed: c.includes(turn) ? c.filter((t) => t !== turn) : [...c, turn] });
  }, []);
  const pick = useCallback((seq: number, e: MouseEvent) => onPick(seq, e), [onPick]);

  return (
    <div className="event-list-wrap">
      <LaneCanvas index={index} rows={rows} rowsVersion={rowsVersion} scrollTop={scrollTop} scrollRef={scrollRef} cursorIndex={cursorIndex} />
      <div
        className="event-list"
        ref={scrollRef}
        onScroll={onScroll}
        onWheel={onWheel}
        onKeyDown={onKeyDown}
        tabIndex={0}
        role="listbox"
        aria-label={`Events (${events.length})`}
        aria-activedescendant={cursor !== null && cursorIndex >= 0 ? `ev-${cursor}` : undefined}
        data-testid="event-list"
        data-follow={following}
      >
        <div className="event-list-inner" style={{ height: virtualizer.getTotalSize() }}>
          {virtualizer.getVirtualItems().map((item) => {
            const r = item.index;
            if (r >= rows.count) {
              const text = live[r - rows.count];
              return text ? <LiveTextRow key={item.key} live={text} top={item.start} /> : null;
            }
            const i = rows.index[r]!;
            const event = events[i];
            if (!event) return null;
            if (rows.header[r]) {
              const turn = index.turnOf[i]!;
              const next = index.turnStarts[turn] ?? index.count;
              return <TurnRow key={item.key} turn={turn} text={summarise(event).text} top={item.start} collapsed={collapsed.includes(turn)} events={next - i} onToggle={toggleTurn} />;
            }
            return (
              <EventRow
                key={item.key}
                event={event}
                kind={index.kinds[i]!}
                top={item.start}
                current={event.seq === cursor}
                future={cursor !== null && event.seq > cursor}
                inSlice={slice !== null && event.seq >= slice.from && event.seq <= slice.to}
                forks={forkPoints.get(event.seq) ?? 0}
                onPick={pick}
              />
            );
          })}
        </div>
      </div>
      {!following && (
        <button
          type="button"
          className="jump-latest"
          data-testid="follow-tail"
          onClick={() => {
            useView.setState({ cursor: null, playing: false });
            setFollow(true);
          }}
        >
          ↓ Latest
        </button>
      )}
    </div>
  );
}

