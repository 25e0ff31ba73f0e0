import { memo, useLayoutEffect, useRef, useState, type CSSProperties } from 'react';
import { clockTime } from '../../lib/time';
import type { LiveText } from '../../state/timeline';
import { ROW_HEIGHT } from './EventRow';

/** Characters of live text kept in the row; the row shows the end of what is being written. */
const TAIL = 2000;

/**
 * The reply (or thinking) the model is writing now, as a row at the tail of the list. It grows
 * with each delta, showing the newest words, and is replaced by the logged event with its id.
 */
export const LiveTextRow = memo(function LiveTextRow({ live, top }: { live: LiveText; top: number }) {
  const style: CSSProperties = { transform: `translateY(${top}px)`, height: ROW_HEIGHT };
  const flat = live.text.replace(/\s+/g, ' ');
  const shown = flat.length > TAIL ? `…${flat.slice(-TAIL)}` : flat;
  // Once the text is wider than the row, its start fades out: the newest words stay in view.
  const summaryRef = useRef<HTMLSpanElement>(null);
  const [overflowing, setOverflowing] = useState(false);
  useLayoutEffect(() => {
    const el = summaryRef.current;
    if (el) setOverflowing(el.scrollWidth > el.clientWidth + 1);
  }, [shown]);
  return (
    <div
      className="event-row family-agent live-row"
      style={style}
      role="listitem"
      aria-busy="true"
      aria-label={`${live.type} being written`}
      data-testid="live-text"
      data-event-id={live.id}
      data-type={live.type}
    >
      <span className="ev-seq" title="Not logged yet">
        <span className="live-dot" aria-hidden="true" />
      </span>
      <span className="ev-time">{clockTime(live.startedAt)}</span>
      <span className="ev-type">
        {live.type} <span className="live-tag">writing…</span>
      </span>
      <span className={`ev-summary live-summary${overflowing ? ' overflowing' : ''}`} ref={summaryRef}>
        <span className="live-body" data-testid="live-text-body">
          {shown}
          <span className="live-caret" aria-hidden="true" />
        </span>
      </span>
    </div>
  );
});
