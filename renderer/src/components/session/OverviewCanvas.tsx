import { useEffect, useRef, useState, type PointerEvent, type WheelEvent } from 'react';
import type { UiEvent } from '../../../../main/api/ui/contract';
import { fitCanvas, onThemeChange, palette } from '../../lib/colors';
import { indexAtOrBefore, type Kind, type SessionIndex } from '../../lib/session-index';
import { useView } from '../../state/view';

const DENSITY_H = 14;
const LANE_H = 5;
/** Kinds that win a pixel column when several share it. */
const RANK: Kind[] = ['error', 'failed', 'user', 'tool', 'hand', 'message', 'result', 'thinking', 'status', 'span', 'other'];

interface Props {
  events: readonly UiEvent[];
  index: SessionIndex;
  width: number;
}

/**
 * The whole session at a glance, x = position: a strip coloured by the events' kinds, one
 * thin lane per hand, the slice shaded and the cursor's playhead. The static picture is drawn
 * into an offscreen canvas (at most a few times a second while events stream in); moving the
 * cursor only copies it and draws the playhead. Dragging moves the cursor; shift-dragging selects a
 * slice; the wheel zooms (the scrubber's buttons zoom to the slice and back out).
 */
export function OverviewCanvas({ events, index, width }: Props) {
  const ref = useRef<HTMLCanvasElement>(null);
  const staticRef = useRef<{ canvas: HTMLCanvasElement; count: number; width: number; theme: number; at: number; a: number; b: number } | null>(null);
  const [theme, setTheme] = useState(0);
  const cursor = useView((s) => s.cursor);
  const slice = useView((s) => s.slice);
  const lanes = index.hands.lanes.slice(0, 6);
  const height = DENSITY_H + 2 + lanes.length * (LANE_H + 1);
  const count = index.count;
  // The window shown: all events, or the zoomed range (event indexes a..b).
  const zoom = useView((s) => s.zoom);
  const a = zoom ? Math.max(0, indexAtOrBefore(events, zoom.from)) : 0;
  const b = zoom ? Math.max(a, indexAtOrBefore(events, zoom.to)) : Math.max(0, count - 1);
  const span = Math.max(1, b - a + 1);
  const [, setTick] = useState(0);
  useEffect(() => onThemeChange(() => setTheme((n) => n + 1)), []);

  useEffect(() => {
    const canvas = ref.current;
    if (!canvas || width <= 0) return;
    let st = staticRef.current;
    const now = performance.now();
    const stale = !st || st.width !== width || st.theme !== theme || st.count !== count || st.a !== a || st.b !== b;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const throttled = stale && st !== null && st.count > 0 && st.width === width && st.theme === theme && st.a === a && !zoom && now - st.at < 250;
    // Streaming: the picture is redrawn at most four times a second; the playhead every time.
    if (throttled) timer = setTimeout(() => setTick((n) => n + 1), 250 - (now - st!.at));
    else if (stale) {
      st = { canvas: st?.canvas ?? document.createElement('canvas'), count, width, theme, at: now, a, b };
      drawStatic(st.canvas, index, width, height, a, b);
      staticRef.current = st;
    }
    const ctx = fitCanvas(canvas, width, height);
    if (!ctx || !st) return () => clearTimeout(timer);
    ctx.clearRect(0, 0, width, height);
    ctx.drawImage(st.canvas, 0, 0, width, height);
    const xOf = (seq: number) => (count <= 1 ? 0 : ((seqIndex0(events, seq) - a + 0.5) / span) * width);
    const p = palette();
    if (slice) {
      ctx.fillStyle = p.selection;
      const x0 = xOf(slice.from);
      ctx.fillRect(x0, 0, Math.max(2, xOf(slice.to) - x0), height);
    }
    const x = cursor === null ? width - 1 : xOf(cursor);
    ctx.fillStyle = p.accent;
    ctx.fillRect(Math.round(x) - 1, 0, 2, height);
    return () => clearTimeout(timer);
  });

  const drag = useRef<{ anchor: number; shift: boolean } | null>(null);
  const seqAt = (e: PointerEvent<HTMLCanvasElement>) => {
    const rect = e.currentTarget.getBoundingClientRect();
    const i = Math.max(a, Math.min(b, a + Math.floor(((e.clientX - rect.left) / rect.width) * span)));
    return events[i]?.seq ?? null;
  };
  const onDown = (e: PointerEvent<HTMLCanvasElement>) => {
    const seq = seqAt(e);
    if (seq === null) return;
    e.currentTarget.setPointerCapture(e.pointerId);
    drag.current = { anchor: seq, shift: e.shiftKey };
    if (e.shiftKey) useView.setState({ slice: { from: seq, to: seq }, tab: 'slice' });
    else useView.setState({ cursor: seq, playing: false });
  };
  // Pointer moves come faster than frames: the newest one is applied once per frame.
  const pending = useRef<{ seq: number; frame: number } | null>(null);
  const onMove = (e: PointerEvent<HTMLCanvasElement>) => {
    const d = drag.current;
    const seq = d && seqAt(e);
    if (!d || seq === null) return;
    if (pending.current) {
      pending.current.seq = seq;
      return;
    }
    const p = { seq, frame: 0 };
    pending.current = p;
    p.frame = requestAnimationFrame(() => {
      pending.current = null;
      if (d.shift) useView.setState({ slice: { from: Math.min(d.anchor, p.seq), to: Math.max(d.anchor, p.seq) } });
      else if (useView.getState().cursor !== p.seq) useView.setState({ cursor: p.seq });
    });
  };
  // The wheel zooms around the pointer (down to 20 events); zoomed all the way out, the window is the whole log.
  const onWheel = (e: WheelEvent<HTMLCanvasElement>) => {
    if (count < 2 || e.deltaY === 0) return;
    const rect = e.currentTarget.getBoundingClientRect();
    const frac = Math.max(0, Math.min(1, (e.clientX - rect.left) / rect.width));
    const next = Math.round(Math.max(20, Math.min(count, span * (e.deltaY < 0 ? 0.8 : 1.25))));
    if (next >= count) return useView.setState({ zoom: null });
    const from = Math.max(0, Math.min(count - next, Math.round(a + frac * span - frac * next)));
    useView.setState({ zoom: { from: events[from]!.seq, to: events[from + next - 1]!.seq } });
  };
  const onUp = () => {
    drag.current = null;
  };
  return (
    <canvas
      ref={ref}
      className="overview-canvas"
      data-testid="overview"
      aria-hidden="true"
      onPointerDown={onDown}
      onPointerMove={onMove}
      onPointerUp={onUp}
      onPointerCancel={onUp}
      onWheel={onWheel}
    />
  );
}


function drawStatic(canvas: HTMLCanvasElement, index: SessionIndex, width: number, height: number, first: number, last: number) {
  const ctx = fitCanvas(canvas, width, height);
  if (!ctx) return;
  const p = palette();
  ctx.clearRect(0, 0, width, height);
  const n = last - first + 1;
  if (index.count === 0 || n <= 0) return;
  const cols = Math.max(1, Math.floor(width));
  for (let c = 0; c < cols; c++) {
    const a = first + Math.floor((c / cols) * n);
    const b = Math.max(a + 1, first + Math.floor(((c + 1) / cols) * n));
    let best = RANK.length;
    // Sample at most 64 events per column: enough to find the column's strongest kind.
    const step = Math.max(1, Math.floor((b - a) / 64));
    for (let i = a; i < b && best > 0; i += step) best = Math.min(best, RANK.indexOf(index.kinds[i]!));
    if (best >= RANK.length) continue;
    ctx.fillStyle = p.kind[RANK[best]!];
    ctx.fillRect(c, 0, 1, DENSITY_H);
  }
  index.hands.lanes.slice(0, 6).forEach((lane, l) => {
    const y = DENSITY_H + 2 + l * (LANE_H + 1);
    const colour = p.hands[l % p.hands.length]!;
    for (let c = 0; c < cols; c++) {
      const i = Math.min(last, first + Math.floor(((c + 0.5) / cols) * n));
      const state = index.hands.stateAt(lane, i);
      if (state === null || state === 'gone') continue;
      ctx.fillStyle = state === 'busy' || state === 'ready' ? colour : p.lane[state];
      ctx.globalAlpha = state === 'ready' ? 0.35 : state === 'held' ? 0.25 : 1;
      ctx.fillRect(c, y, 1, LANE_H);
    }
    ctx.globalAlpha = 1;
  });
}

/** The last event at or before `seq`, or the first when none is. */
const seqIndex0 = (events: readonly UiEvent[], seq: number): number => Math.max(0, indexAtOrBefore(events, seq));
