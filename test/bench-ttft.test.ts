/**
 * bench:ttft --quick works (not that it is fast): both modes run real docker and ssh hands, every
 * coupled session has its repository on its hand before its first model request, decoupled
 * sessions clone only when a tool needs the hand, pooled sessions' tool calls get a hand made
 * ahead with the repository on it, and the report is written as JSON and SVG.
 */
import fs from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../bench/build';
import { benchTtft } from '../bench/ttft';
import type { SessionTiming } from '../bench/ttft-run';
import { tmpDir } from './helpers/tmp';
import { percentile } from '../bench/stats';

describe('bench:ttft --quick', () => {
  beforeAll(() => ensureBuilt(), 300_000);

  it('measures coupled and decoupled sessions on real hands and writes the report', async () => {
    const outDir = tmpDir('corral-bench-ttft-out-');
    const lines: string[] = [];
    const s = await benchTtft({ quick: true, outDir, log: (l) => lines.push(l) });
    const report = JSON.parse(fs.readFileSync(path.join(outDir, 'ttft.json'), 'utf8')) as { sessions: { coupled: SessionTiming[]; decoupled: SessionTiming[]; pooled: SessionTiming[] } };
    const { coupled, decoupled, pooled } = report.sessions;
    expect(coupled).toHaveLength(6);
    expect(decoupled).toHaveLength(6);
    expect(pooled).toHaveLength(6);
    expect([...coupled, ...decoupled, ...pooled].filter((x) => x.error)).toEqual([]);
    expect(new Set(coupled.map((x) => x.env))).toEqual(new Set(['docker', 'ssh']));
    // Coupled: the hand (clone included) before the model; decoupled: only a tool's call clones.
    expect(coupled.every((x) => x.clonedBeforeModel)).toBe(true);
    expect(decoupled.some((x) => x.clonedBeforeModel)).toBe(false);
    expect(decoupled.filter((x) => x.cloned).map((x) => x.tool)).toEqual(decoupled.filter((x) => x.tool).map(() => true));
    expect(decoupled.filter((x) => x.firstTool !== undefined)).toHaveLength(decoupled.filter((x) => x.tool).length);
    expect(s.ttft.coupled.n).toBe(6);
    // Each session's next turn started its request on the brain it had, in every mode.
    expect([s.nextToRequest.coupled.n, s.nextToRequest.decoupled.n, s.nextToRequest.pooled.n]).toEqual([6, 6, 6]);
    expect([...coupled, ...decoupled, ...pooled].every((x) => x.nextToRequest >= 0 && x.nextToRequest < 10_000)).toBe(true);
    // Each next turn has the cores' busy share while it ran (bench/ttft-cores.ts), and the split by it adds up.
    expect([...coupled, ...decoupled, ...pooled].every((x) => x.nextBusy !== undefined && x.nextBusy >= 0 && x.nextBusy <= 1)).toBe(true);
    expect(s.nextToRequestNotSaturated.pooled.n).toBe(pooled.filter((x) => x.nextBusy! < 0.9).length);
    expect(Number.isFinite(s.reduction.p50)).toBe(true);
    // TTFT is never below the request's own first token: the reduction stays within that bound.
    expect(s.reduction.p50).toBeLessThanOrEqual(s.reductionBound.p50);
    expect(s.reduction.p95).toBeLessThanOrEqual(s.reductionBound.p95);
    // Per kind: the sessions of each (they alternate), and each kind's own reduction.
    expect(Object.fromEntries(Object.entries(s.byKind).map(([env, k]) => [env, [k.coupled.n, k.decoupled.n]]))).toEqual({ docker: [3, 3], ssh: [3, 3] });
    expect(s.byKind.docker!.coupled.p50).toBe(percentile(coupled.filter((x) => x.env === 'docker').map((x) => x.ttft), 50));
    expect(s.byKind.docker!.reduction.p50).toBeCloseTo(1 - s.byKind.docker!.decoupled.p50 / s.byKind.docker!.coupled.p50, 10);
    expect(lines.join('\n')).toMatch(/docker sessions only: reduction\s+-?[\d.]+%\s+-?[\d.]+%/);
    expect(s.firstToolCall.decoupled.n).toBe(2);
    // Tool calls went to both kinds; with the pool, each got a hand made ahead (repository included).
    expect(new Set(decoupled.filter((x) => x.tool).map((x) => x.env))).toEqual(new Set(['docker', 'ssh']));
    expect(pooled.filter((x) => x.tool).map((x) => x.pooled === true && x.cloned)).toEqual([true, true]);
    expect(pooled.filter((x) => !x.tool).some((x) => x.pooled)).toBe(false);
    expect(s.poolHits).toEqual({ hits: 2, of: 2 });
    expect(s.firstToolCall.pooled.n).toBe(2);
    const svg = fs.readFileSync(path.join(outDir, 'ttft.svg'), 'utf8');
    expect(svg.startsWith('<svg')).toBe(true);
    expect(svg).toContain('TTFT decoupled');
    expect(svg).toContain('first tool call, pooled');
    expect(lines.join('\n')).toMatch(/reduction\s+-?[\d.]+%\s+-?[\d.]+%/);
    expect(lines.join('\n')).toMatch(/its next turn, pooled\s+6\s/);
  }, 300_000);
});
