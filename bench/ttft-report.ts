import { fmt, percentile } from './stats';
import type { SessionTiming } from './ttft-run';

/** p50/p95 of a sample, and how many. */
export interface Spread {
  n: number;
  p50: number;
  p95: number;
}
const spread = (xs: number[]): Spread => ({ n: xs.length, p50: percentile(xs, 50), p95: percentile(xs, 95) });

/** bench:ttft's figures: TTFT and brain start per mode, the reductions, the first tool call. */
export function summarise(coupled: SessionTiming[], decoupled: SessionTiming[]) {
  const ttft = { coupled: spread(coupled.map((s) => s.ttft)), decoupled: spread(decoupled.map((s) => s.ttft)) };
  const toRequest = { coupled: spread(coupled.map((s) => s.toRequest)), decoupled: spread(decoupled.map((s) => s.toRequest)) };
  const cut = (a: number, b: number) => (a > 0 ? 1 - b / a : NaN);
  return {
    ttft,
    toRequest,
    reduction: { p50: cut(ttft.coupled.p50, ttft.decoupled.p50), p95: cut(ttft.coupled.p95, ttft.decoupled.p95) },
    firstToolCall: { decoupled: spread(decoupled.flatMap((s) => (s.firstTool === undefined ? [] : [s.firstTool]))) },
    errors: [...coupled, ...decoupled].filter((s) => s.error).length,
  };
}
export type TtftSummary = ReturnType<typeof summarise>;

const ms = (x: number) => `${fmt(x, 0)} ms`;
const pct = (x: number) => `${fmt(x * 100, 1)}%`;

/** The table bench:ttft prints. */
export function table(s: TtftSummary): string {
  const row = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(44) : c.padStart(12))).join('');
  return [
    row(['', 'n', 'p50', 'p95']),
    row(['TTFT, coupled (provision, then the model)', String(s.ttft.coupled.n), ms(s.ttft.coupled.p50), ms(s.ttft.coupled.p95)]),
    row(['TTFT, decoupled (hands at first use)', String(s.ttft.decoupled.n), ms(s.ttft.decoupled.p50), ms(s.ttft.decoupled.p95)]),
    row(['reduction', '', pct(s.reduction.p50), pct(s.reduction.p95)]),
    row(['user.message → model request, coupled', String(s.toRequest.coupled.n), ms(s.toRequest.coupled.p50), ms(s.toRequest.coupled.p95)]),
    row(['user.message → model request, decoupled', String(s.toRequest.decoupled.n), ms(s.toRequest.decoupled.p50), ms(s.toRequest.decoupled.p95)]),
    row(['first tool call (tool_use → result), decoupled', String(s.firstToolCall.decoupled.n), ms(s.firstToolCall.decoupled.p50), ms(s.firstToolCall.decoupled.p95)]),
  ].join('\n');
}

/** A bar chart of the same figures, as a standalone SVG. */
export function chart(s: TtftSummary, caption: string): string {
  const bars = [
    { label: 'TTFT coupled', v: s.ttft.coupled, colour: '#c0504d' },
    { label: 'TTFT decoupled', v: s.ttft.decoupled, colour: '#4f81bd' },
    { label: 'first tool call (decoupled)', v: s.firstToolCall.decoupled, colour: '#9bbb59' },
  ];
  const W = 720;
  const left = 220;
  const top = 50;
  const rowH = 56;
  const max = Math.max(1, ...bars.flatMap((b) => [b.v.p50, b.v.p95].filter(Number.isFinite)));
  const x = (v: number) => (Number.isFinite(v) ? ((W - left - 90) * v) / max : 0);
  const esc = (t: string) => t.replace(/&/g, '&amp;').replace(/</g, '&lt;');
  const parts = bars.map((b, i) => {
    const y = top + i * rowH;
    return [
      `<text x="${left - 10}" y="${y + 22}" text-anchor="end">${esc(b.label)}</text>`,
      `<rect x="${left}" y="${y}" width="${x(b.v.p50).toFixed(1)}" height="18" fill="${b.colour}"/>`,
      `<text x="${left + x(b.v.p50) + 6}" y="${y + 14}">p50 ${esc(ms(b.v.p50))}</text>`,
      `<rect x="${left}" y="${y + 22}" width="${x(b.v.p95).toFixed(1)}" height="18" fill="${b.colour}" fill-opacity="0.55"/>`,
      `<text x="${left + x(b.v.p95) + 6}" y="${y + 36}">p95 ${esc(ms(b.v.p95))}</text>`,
    ].join('\n');
  });
  const H = top + bars.length * rowH + 40;
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" font-family="sans-serif" font-size="13">`,
    `<rect width="100%" height="100%" fill="white"/>`,
    `<text x="16" y="24" font-size="16" font-weight="bold">Corral time to first token: coupled vs decoupled hands</text>`,
    ...parts,
    `<text x="16" y="${H - 14}" fill="#555">${esc(`reduction p50 ${pct(s.reduction.p50)}, p95 ${pct(s.reduction.p95)} — ${caption}`)}</text>`,
    `</svg>`,
    '',
  ].join('\n');
}
