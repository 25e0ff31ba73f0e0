import { useEffect, useRef, useState } from 'react';
import type { UiEvent } from '../../../../main/api/ui/contract';
import { indexAtOrBefore, type SessionIndex } from '../../lib/session-index';
import { clockTime } from '../../lib/time';
import { useView } from '../../state/view';
import { OverviewCanvas } from './OverviewCanvas';
import { usePlayback } from './use-playback';

interface Props {
  events: readonly UiEvent[];
  index: SessionIndex;
}

/**
 * The scrubber over the session's time: the overview strip (drag to move, shift-drag to slice),
 * a slider, step and playback buttons (1×/4×/16×, idle gaps skipped), and a jump to a number.
 * The cursor it moves is the one every pane follows.
 */
export function Scrubber({ events, index }: Props) {
  const cursor = useView((s) => s.cursor);
  const playing = useView((s) => s.playing);
  const speed = useView((s) => s.speed);
  const wrapRef = useRef<HTMLDivElement>(null);
  const [width, setWidth] = useState(0);
  useEffect(() => {
    const el = wrapRef.current;
    if (!el) return;
    const ro = new ResizeObserver(() => setWidth(el.clientWidth));
    ro.observe(el);
    setWidth(el.clientWidth);
    return () => ro.disconnect();
  }, []);
  usePlayback(events, index);

  const n = events.length;
  const at = cursor === null ? n - 1 : indexAtOrBefore(events, cursor);
  const here = events[at];
  const go = (i: number) => {
    const e = events[Math.max(0, Math.min(n - 1, i))];
    if (e) useView.setState({ cursor: e.seq, playing: false });
  };
  const [jump, setJump] = useState('');
  const slice = useView((s) => s.slice);
  const zoom = useView((s) => s.zoom);
  const lanes = index.hands.lanes;

  return (
    <section className="scrubber" aria-label="Scrubber" data-testid="scrubber">
      <div className="scrub-strip" ref={wrapRef}>
        <OverviewCanvas events={events} index={index} width={width} />
      </div>
      <div className="scrub-row">
        <input
          type="range"
          className="scrub-range"
          min={0}
          max={Math.max(0, n - 1)}
          value={Math.max(0, at)}
          onChange={(e) => go(Number(e.target.value))}
          aria-label="Position in the session"
          aria-valuetext={here ? `event ${here.seq} of ${events[n - 1]?.seq ?? 0}, ${clockTime(here.processed_at)}` : 'empty'}
          disabled={n === 0}
          data-testid="scrub-range"
        />
      </div>
      <div className="scrub-row scrub-controls">
        <button type="button" onClick={() => go(0)} aria-label="First event" disabled={n === 0}>|◀</button>
        <button type="button" onClick={() => go(at - 1)} aria-label="Previous event" disabled={at <= 0}>◀|</button>
        <button
          type="button"
          className="play"
          onClick={() => useView.setState({ playing: !playing, ...(cursor === null || at >= n - 1 ? { cursor: events[0]?.seq ?? null } : {}) })}
          aria-label={playing ? 'Pause' : 'Play'}
          aria-pressed={playing}
          disabled={n === 0}
          data-testid="play"
        >
          {playing ? '❚❚' : '▶'}
        </button>
        <button type="button" onClick={() => go(at + 1)} aria-label="Next event" disabled={at >= n - 1}>|▶</button>
        <button type="button" onClick={() => useView.setState({ cursor: null, playing: false })} aria-label="Latest (live)" aria-pressed={cursor === null} data-testid="go-live">
          Live
        </button>
        <label className="inline">
          <span className="sr-only">Playback speed</span>
          <select value={speed} onChange={(e) => useView.setState({ speed: Number(e.target.value) as 1 | 4 | 16 })} aria-label="Playback speed">
            <option value={1}>1×</option>
            <option value={4}>4×</option>
            <option value={16}>16×</option>
          </select>
        </label>
        <form
          className="inline"
          onSubmit={(e) => {
            e.preventDefault();
            const seq = Number(jump);
            if (Number.isInteger(seq) && seq > 0) go(indexAtOrBefore(events, seq));
            setJump('');
          }}
        >
          <input className="jump" inputMode="numeric" placeholder="#" value={jump} onChange={(e) => setJump(e.target.value)} aria-label="Jump to event number" />
        </form>
        <button type="button" onClick={() => useView.setState({ zoom: slice })} disabled={!slice} aria-label="Zoom to slice" title="Show only the slice in the strip (the wheel zooms too)">
          Zoom
        </button>
        {zoom && (
          <button type="button" onClick={() => useView.setState({ zoom: null })} data-testid="zoom-reset">
            Reset zoom
          </button>
        )}
        <span className="scrub-pos" data-testid="scrub-position" aria-live="polite">
          {here ? `#${here.seq} / ${events[n - 1]!.seq} · ${clockTime(here.processed_at)} · turn ${index.turnOf[at] ?? 0}` : 'no events'}
          {cursor === null && n > 0 && <span className="live-tag"> live</span>}
        </span>
        <span className="lane-legend" role="list" aria-label="Hands">
          {lanes.map((l, k) => (
            <span key={l.name} className="legend-item" role="listitem">
              <span className={`swatch hand-${k % 6}`} aria-hidden="true" />
              {l.name}
            </span>
          ))}
        </span>
      </div>
    </section>
  );
}
