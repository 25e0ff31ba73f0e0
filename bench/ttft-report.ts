import { fmt, percentile } from './stats';
import { SATURATED } from './ttft-cores';
import type { SessionTiming } from './ttft-run';

/** p50/p95 of a sample, and how many. */
export interface Spread {
  n: number;
  p50: number;
  p95: number;
}
const spread = (xs: number[]): Spread => ({ n: xs.length, p50: percentile(xs, 50), p95: percentile(xs, 95) });
const tools = (xs: SessionTiming[], pick: (s: SessionTiming) => number | undefined) => spread(xs.flatMap((s) => (pick(s) === undefined ? [] : [pick(s)!])));

/** bench:ttft's figures: TTFT and brain start per mode, the reductions, the first tool call with and without the pool. */
export function summarise(coupled: SessionTiming[], decoupled: SessionTiming[], pooled: SessionTiming[] = []) {
  const perMode = (pick: (s: SessionTiming) => number) => ({ coupled: spread(coupled.map(pick)), decoupled: spread(decoupled.map(pick)), pooled: spread(pooled.map(pick)) });
  const ttft = perMode((s) => s.ttft);
  const toRequest = perMode((s) => s.toRequest);
  const nextToRequest = perMode((s) => s.nextToRequest);
  // The issue's next-turn target holds "on a machine that is not saturated": the turns during
  // which no 100 ms window had the cores SATURATED busy (ttft-cores.ts), beside all of them.
  const calm = (xs: SessionTiming[]) => spread(xs.filter((s) => (s.nextBusy ?? NaN) < SATURATED).map((s) => s.nextToRequest));
  const nextToRequestNotSaturated = { coupled: calm(coupled), decoupled: calm(decoupled), pooled: calm(pooled) };
  const cut = (a: number, b: number) => (a > 0 ? 1 - b / a : NaN);
  // The request's own first token (span.model_request_end's first_token_ms: the model's delay, the
  // same for session N in every mode, plus the proxy and stream of that request): the TTFT if
  // user.message → model request took no time, and the reduction that would give.
  const requestFirstToken = spread(decoupled.map((s) => s.ttft - s.toRequest));
  const byKind = (xs: SessionTiming[], env: string) => xs.filter((s) => s.env === env);
  return {
    ttft,
    toRequest,
    /** The next turn of a running session: user.message → span.model_request_start. */
    nextToRequest,
    /** The same, only the turns that ran while the cores were under SATURATED busy. */
    nextToRequestNotSaturated,
    reduction: { p50: cut(ttft.coupled.p50, ttft.decoupled.p50), p95: cut(ttft.coupled.p95, ttft.decoupled.p95) },
    /** TTFT less user.message → model request, and the reduction if that part took no time. */
    requestFirstToken,
    reductionBound: { p50: cut(ttft.coupled.p50, requestFirstToken.p50), p95: cut(ttft.coupled.p95, requestFirstToken.p95) },
    /**
     * The same per environment kind: the sessions alternate kinds whose provisioning differs by an
     * order of magnitude (a container started and filled vs a host connected), so the overall p50
     * falls between two clusters and moves with the mix; each kind's is a figure of its own.
     */
    byKind: Object.fromEntries(
      [...new Set(coupled.map((s) => s.env))].map((env) => {
        const c = spread(byKind(coupled, env).map((s) => s.ttft));
        const d = spread(byKind(decoupled, env).map((s) => s.ttft));
        return [env, { coupled: c, decoupled: d, reduction: { p50: cut(c.p50, d.p50), p95: cut(c.p95, d.p95) } }];
      }),
    ) as Record<string, { coupled: Spread; decoupled: Spread; reduction: { p50: number; p95: number } }>,
    firstToolCall: {
      decoupled: tools(decoupled, (s) => s.firstTool),
      pooled: tools(pooled, (s) => s.firstTool),
      /** Pooled mode, split: the calls whose hand came from the pool, and those that found none (a miss). */
      pooledHit: tools(pooled.filter((s) => s.pooled), (s) => s.firstTool),
      pooledMiss: tools(pooled.filter((s) => !s.pooled), (s) => s.firstTool),
    },
    /** The first tool call's wait for its hand (tool_use → hand.ready), per kind. */
    handWait: {
      decoupled: { docker: tools(byKind(decoupled, 'docker'), (s) => s.firstToolHand), ssh: tools(byKind(decoupled, 'ssh'), (s) => s.firstToolHand) },
      pooled: { docker: tools(byKind(pooled, 'docker'), (s) => s.firstToolHand), ssh: tools(byKind(pooled, 'ssh'), (s) => s.firstToolHand) },
    },
    /** Tool-calling sessions of the pooled mode whose hand came from the pool. */
    poolHits: { hits: pooled.filter((s) => s.tool && s.pooled).length, of: pooled.filter((s) => s.tool).length },
    /** The same per kind, with each kind's first tool call p50/p95 (misses included). */
    poolHitsByKind: Object.fromEntries(
      [...new Set(pooled.map((s) => s.env))].map((env) => {
        const xs = pooled.filter((s) => s.env === env && s.tool);
        return [env, { hits: xs.filter((s) => s.pooled).length, misses: xs.filter((s) => !s.pooled).length, firstToolCall: tools(xs, (s) => s.firstTool) }];
      }),
    ) as Record<string, { hits: number; misses: number; firstToolCall: Spread }>,
    errors: [...coupled, ...decoupled, ...pooled].filter((s) => s.error).length,
  };
}
export type TtftSummary = ReturnType<typeof summarise>;

const ms = (x: number) => (Number.isFinite(x) ? `${fmt(x, x < 100 ? 1 : 0)} ms` : '—');
const pct = (x: number) => `${fmt(x * 100, 1)}%`;

/** The table bench:ttft prints. */
export function table(s: TtftSummary): string {
  const row = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(52) : c.padStart(11))).join('');
  const line = (label: string, v: Spread) => row([label, String(v.n), ms(v.p50), ms(v.p95)]);
  return [
    row(['', 'n', 'p50', 'p95']),
    line('TTFT, coupled (provision, then the model)', s.ttft.coupled),
    line('TTFT, decoupled (hands at first use)', s.ttft.decoupled),
    row(['reduction', '', pct(s.reduction.p50), pct(s.reduction.p95)]),
    line("  the request's own first token (first_token_ms)", s.requestFirstToken),
    row(['  the reduction if user.message → request took 0', '', pct(s.reductionBound.p50), pct(s.reductionBound.p95)]),
    ...Object.entries(s.byKind).flatMap(([env, k]) => [
      line(`  ${env} sessions only: TTFT coupled`, k.coupled),
      line(`  ${env} sessions only: TTFT decoupled`, k.decoupled),
      row([`  ${env} sessions only: reduction`, '', pct(k.reduction.p50), pct(k.reduction.p95)]),
    ]),
    line('TTFT, decoupled with the warm hand pool', s.ttft.pooled),
    line('user.message → model request, coupled', s.toRequest.coupled),
    line('user.message → model request, decoupled', s.toRequest.decoupled),
    line('user.message → model request, pooled', s.toRequest.pooled),
    line('  its next turn, coupled', s.nextToRequest.coupled),
    line('  its next turn, decoupled', s.nextToRequest.decoupled),
    line('  its next turn, pooled', s.nextToRequest.pooled),
    line(`  its next turn, decoupled, cores < ${SATURATED * 100} % busy then`, s.nextToRequestNotSaturated.decoupled),
    line(`  its next turn, pooled, cores < ${SATURATED * 100} % busy then`, s.nextToRequestNotSaturated.pooled),
    line('first tool call (tool_use → result), decoupled', s.firstToolCall.decoupled),
    line('first tool call (tool_use → result), pooled', s.firstToolCall.pooled),
    line('  pooled, hand from the pool (hits)', s.firstToolCall.pooledHit),
    line('  pooled, none ready (misses)', s.firstToolCall.pooledMiss),
    ...Object.entries(s.poolHitsByKind).map(([env, k]) => line(`  pooled, ${env}: ${k.hits} hits, ${k.misses} misses`, k.firstToolCall)),
    line('  its wait for the hand, decoupled, docker', s.handWait.decoupled.docker),
    line('  its wait for the hand, decoupled, ssh', s.handWait.decoupled.ssh),
    line('  its wait for the hand, pooled, docker', s.handWait.pooled.docker),
    line('  its wait for the hand, pooled, ssh', s.handWait.pooled.ssh),
    row(['pool hits (tool sessions given a pooled hand)', '', `${s.poolHits.hits}/${s.poolHits.of}`, '']),
  ].join('\n');
}

/** A bar chart of the same figures, as a standalone SVG. */
export function chart(s: TtftSummary, caption: string): string {
  const bars = [
    { label: 'TTFT coupled', v: s.ttft.coupled, colour: '#c0504d' },
    { label: 'TTFT decoupled', v: s.ttft.decoupled, colour: '#4f81bd' },
    { label: 'TTFT decoupled + pool', v: s.ttft.pooled, colour: '#2c4d75' },
    { label: 'first tool call, decoupled', v: s.firstToolCall.decoupled, colour: '#9bbb59' },
    { label: 'first tool call, pooled', v: s.firstToolCall.pooled, colour: '#4f6228' },
  ];
  const W = 760;
  const left = 230;
  const top = 50;
  const rowH = 56;
  const max = Math.max(1, ...bars.flatMap((b) => [b.v.p50, b.v.p95].filter(Number.isFinite)));
  const x = (v: number) => (Number.isFinite(v) ? ((W - left - 100) * v) / max : 0);
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
    `<text x="16" y="24" font-size="16" font-weight="bold">Corral time to first token: coupled vs decoupled hands, and the warm pool</text>`,
    ...parts,
    `<text x="16" y="${H - 14}" fill="#555">${esc(`reduction p50 ${pct(s.reduction.p50)}, p95 ${pct(s.reduction.p95)} — ${caption}`)}</text>`,
    `</svg>`,
    '',
  ].join('\n');
}
