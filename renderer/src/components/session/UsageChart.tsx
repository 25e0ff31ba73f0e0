import { useEffect, useMemo, useRef, useState } from 'react';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { onThemeChange, palette } from '../../lib/colors';
import type { SessionIndex } from '../../lib/session-index';

/** Turns listed in the table (the newest). */
const TABLE_ROWS = 200;

/**
 * Tokens per turn (input, output, cache read, cache write) and time to first token, as a small
 * uPlot chart; the cursor's turn is marked. A table says the same for screen readers.
 */
export function UsageChart({ index, turn }: { index: SessionIndex; turn: number }) {
  const ref = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);
  const turns = index.turnUsage();
  const key = `${index.requests.length}`;
  const data = useMemo(
    () =>
      [
        turns.map((t) => t.turn),
        turns.map((t) => t.input),
        turns.map((t) => t.output),
        turns.map((t) => t.cacheRead),
        turns.map((t) => t.cacheWrite),
        turns.map((t) => t.ttftMs),
      ] as uPlot.AlignedData,
    // eslint-disable-next-line react-hooks/exhaustive-deps
    [key],
  );

  // The chart is made afresh with new data at most twice a second (a long log loading, events
  // streaming in); each chart is cheap, a chart per batch is not.
  const latest = useRef(data);
  latest.current = data;
  const [theme, setTheme] = useState(0);
  useEffect(() => onThemeChange(() => setTheme((n) => n + 1)), []);
  const hasData = turns.length > 0;
  const [tableOpen, setTableOpen] = useState(false);
  const lastMade = useRef(0);
  const timer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  const [made, setMade] = useState(0);
  useEffect(() => {
    const el = ref.current;
    if (!el || !hasData) return;
    const wait = 500 - (performance.now() - lastMade.current);
    if (wait > 0) {
      // One pending redraw at a time; it draws whatever the data is when it fires.
      timer.current ??= setTimeout(() => {
        timer.current = undefined;
        setMade((n) => n + 1);
      }, wait);
      return;
    }
    lastMade.current = performance.now();
    const p = palette();
    const width = Math.max(200, el.clientWidth);
    const opts: uPlot.Options = {
      width,
      height: 120,
      legend: { show: true, live: false },
      cursor: { show: true, drag: { x: false, y: false } },
      scales: { x: { time: false, range: (_u, min, max) => (min === max ? [min - 0.5, max + 0.5] : [min, max]) }, ms: { auto: true } },
      axes: [
        { stroke: p.muted, grid: { stroke: p.line }, ticks: { stroke: p.line }, size: 24, incrs: [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000] },
        { stroke: p.muted, grid: { stroke: p.line }, ticks: { stroke: p.line }, size: 52 },
        { scale: 'ms', side: 1, stroke: p.muted, grid: { show: false }, size: 48 },
      ],
      series: [
        { label: 'turn' },
        { label: 'in', stroke: p.kind.user, width: 2, points: { show: latest.current[0].length < 50 } },
        { label: 'out', stroke: p.kind.message, width: 2, points: { show: latest.current[0].length < 50 } },
        { label: 'cache read', stroke: p.kind.result, width: 1 },
        { label: 'cache write', stroke: p.kind.hand, width: 1 },
        { label: 'TTFT ms', stroke: p.kind.span, width: 1, dash: [4, 3], scale: 'ms' },
      ],
    };
    // The old chart stays until the new one replaces it (no blank while throttled).
    plot.current?.destroy();
    el.replaceChildren();
    plot.current = new uPlot(opts, latest.current, el);
  }, [theme, hasData, data, made]);
  useEffect(
    () => () => {
      clearTimeout(timer.current);
      plot.current?.destroy();
      plot.current = null;
    },
    [],
  );

  useEffect(() => {
    const u = plot.current;
    if (!u || turns.length === 0) return;
    const k = turns.findIndex((t) => t.turn === turn);
    if (k >= 0) u.setCursor({ left: u.valToPos(turn, 'x'), top: 10 });
  }, [turn, data, turns, made]);

  if (turns.length === 0) return <p className="muted">No model requests yet.</p>;
  return (
    <figure className="usage-chart" aria-label="Tokens and time to first token per turn" data-testid="usage-chart" data-turns={turns.length} data-x={String(data[0])}>
      <div ref={ref} />
      <details onToggle={(e) => setTableOpen(e.currentTarget.open)}>
        <summary>Table</summary>
        {tableOpen && (
        <table className="usage-table">
          <thead>
            <tr>
              <th scope="col">Turn</th>
              <th scope="col">In</th>
              <th scope="col">Out</th>
              <th scope="col">Cache read</th>
              <th scope="col">Cache write</th>
              <th scope="col">TTFT</th>
            </tr>
          </thead>
          <tbody>
            {turns.slice(-TABLE_ROWS).map((t) => (
              <tr key={t.turn} aria-current={t.turn === turn ? 'true' : undefined}>
                <td>{t.turn}</td>
                <td>{t.input}</td>
                <td>{t.output}</td>
                <td>{t.cacheRead}</td>
                <td>{t.cacheWrite}</td>
                <td>{t.ttftMs === null ? '–' : `${Math.round(t.ttftMs)} ms`}</td>
              </tr>
            ))}
          </tbody>
        </table>
        )}
      </details>
    </figure>
  );
}
