import { useEffect, useRef, useState, type RefObject } from 'react';
import { fitCanvas, onThemeChange, palette } from '../../lib/colors';
import type { RowModel } from '../../lib/rows';
import type { SessionIndex } from '../../lib/session-index';
import { ROW_HEIGHT } from './EventRow';

export const LANE_WIDTH = 16;

interface Props {
  index: SessionIndex;
  rows: RowModel;
  rowsVersion: number;
  scrollTop: number;
  scrollRef: RefObject<HTMLDivElement | null>;
  cursorIndex: number;
}

/**
 * One lane per hand beside the rows, on canvas: for each visible row, what each hand was doing
 * then — held but not made yet (dotted), provisioning (amber), ready (thin), running a call
 * (thick), lost (red), handed over or released (ends with an arrow). Only visible rows are drawn.
 */
export function LaneCanvas({ index, rows, rowsVersion, scrollTop, scrollRef, cursorIndex }: Props) {
  const canvasRef = useRef<HTMLCanvasElement>(null);
  const [height, setHeight] = useState(0);
  const [theme, setTheme] = useState(0);
  const lanes = index.hands.lanes;
  const width = Math.max(1, lanes.length) * LANE_WIDTH + 4;

  useEffect(() => {
    const el = scrollRef.current;
    if (!el) return;
    const ro = new ResizeObserver(() => setHeight(el.clientHeight));
    ro.observe(el);
    setHeight(el.clientHeight);
    return () => ro.disconnect();
  }, [scrollRef]);
  useEffect(() => onThemeChange(() => setTheme((n) => n + 1)), []);

  useEffect(() => {
    const canvas = canvasRef.current;
    if (!canvas || height === 0) return;
    const ctx = fitCanvas(canvas, width, height);
    if (!ctx) return;
    const p = palette();
    ctx.clearRect(0, 0, width, height);
    const first = Math.max(0, Math.floor(scrollTop / ROW_HEIGHT));
    const last = Math.min(rows.count - 1, Math.ceil((scrollTop + height) / ROW_HEIGHT));
    lanes.forEach((lane, l) => {
      const x = 2 + l * LANE_WIDTH;
      const colour = p.hands[l % p.hands.length]!;
      for (let r = first; r <= last; r++) {
        const i = rows.index[r]!;
        const y = r * ROW_HEIGHT - scrollTop;
        const state = index.hands.stateAt(lane, i);
        if (state === null || state === 'gone') {
          if (lane.departures.some((d) => d.index === i)) drawArrow(ctx, x, y, p.muted);
          continue;
        }
        const mid = x + LANE_WIDTH / 2;
        if (state === 'held') {
          ctx.fillStyle = p.lane.held;
          for (let d = 2; d < ROW_HEIGHT; d += 6) ctx.fillRect(mid - 0.5, y + d, 1, 2);
        } else if (state === 'provisioning') {
          ctx.fillStyle = p.lane.provisioning;
          ctx.fillRect(x + 3, y, LANE_WIDTH - 6, ROW_HEIGHT);
        } else if (state === 'ready') {
          ctx.fillStyle = colour;
          ctx.fillRect(mid - 1, y, 2, ROW_HEIGHT);
        } else if (state === 'busy') {
          ctx.fillStyle = colour;
          ctx.fillRect(x + 3, y, LANE_WIDTH - 6, ROW_HEIGHT);
        } else if (state === 'lost') {
          ctx.fillStyle = p.lane.lost;
          const lostHere = lane.losses.some((x2) => x2.index === i);
          if (lostHere) drawCross(ctx, x, y, p.lane.lost);
          else ctx.fillRect(mid - 0.5, y, 1, ROW_HEIGHT);
        }
      }
    });
    // The cursor's row, across the lanes.
    if (cursorIndex >= 0) {
      const y = rows.rowOf(cursorIndex) * ROW_HEIGHT - scrollTop;
      ctx.strokeStyle = p.accent;
      ctx.lineWidth = 1;
      ctx.strokeRect(0.5, y + 0.5, width - 1, ROW_HEIGHT - 1);
    }
  }, [index, rows, rowsVersion, scrollTop, height, width, lanes, cursorIndex, theme]);

  const label = `Hand lanes: ${lanes.map((l) => `${l.name} (${index.hands.stateAt(l, Math.max(0, cursorIndex < 0 ? index.count - 1 : cursorIndex)) ?? 'not held'})`).join(', ')}`;
  return <canvas ref={canvasRef} className="lane-canvas" role="img" aria-label={label} data-testid="lane-canvas" data-lanes={lanes.map((l) => l.name).join(',')} style={{ width }} />;
}

function drawCross(ctx: CanvasRenderingContext2D, x: number, y: number, colour: string) {
  ctx.strokeStyle = colour;
  ctx.lineWidth = 2;
  ctx.beginPath();
  ctx.moveTo(x + 3, y + 5);
  ctx.lineTo(x + LANE_WIDTH - 3, y + ROW_HEIGHT - 5);
  ctx.moveTo(x + LANE_WIDTH - 3, y + 5);
  ctx.lineTo(x + 3, y + ROW_HEIGHT - 5);
  ctx.stroke();
}

function drawArrow(ctx: CanvasRenderingContext2D, x: number, y: number, colour: string) {
  ctx.fillStyle = colour;
  ctx.beginPath();
  ctx.moveTo(x + 3, y + 6);
  ctx.lineTo(x + LANE_WIDTH - 3, y + ROW_HEIGHT / 2);
  ctx.lineTo(x + 3, y + ROW_HEIGHT - 6);
  ctx.fill();
}
