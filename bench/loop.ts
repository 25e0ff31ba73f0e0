/**
 * `npm run bench:loop`: does one session's big tool call stall the host? One session greps and
 * globs a tree of BENCH_LOOP_FILES files (default 100,000) and reads a 60 MB file while another
 * session's bash round trip and `GET /v1/sessions` are timed and the host's event-loop delay is
 * sampled. Each is run two ways, alternating, BENCH_LOOP_RUNS times (default 3), medians shown,
 * next to a control (the same probes for 1 s with nothing else running: the machine's own noise):
 *
 * - before: the same work done on the host's own thread, as the local hand did until it moved
 *   off the loop (the search code called directly; read with readFileSync and the full output
 *   written with writeFileSync);
 * - now: through the registry and the local hand, which run it on a worker thread.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { readOutcome } from '../main/hands/local/file-text';
import { scanGlob, scanGrep } from '../main/hands/local/search-scan';
import type { ToolOutcome } from '../main/hands/types';
import { describeReport, probeWhile, type ProbeReport } from '../test/helpers/loop-probe';
import { startSearchScenario, type SearchScenario } from '../test/helpers/search-scenario';
import { fmt, percentile } from './stats';
import { fullOutputText } from '../main/hands/full-output';

const FILES = Number(process.env.BENCH_LOOP_FILES ?? 100_000);
const RUNS = Number(process.env.BENCH_LOOP_RUNS ?? 3);
const BIG_FILE_MB = 60;

interface Case {
  name: string;
  /** The work as the host did it before: synchronously on its own thread. */
  before(s: SearchScenario): ToolOutcome;
  /** The work through the local hand now. */
  now(s: SearchScenario): Promise<ToolOutcome>;
}

const cases: Case[] = [
  {
    name: `grep ${FILES.toLocaleString('en-US')} files`,
    before: (s) => scanGrep({ kind: 'grep', workDir: s.workDir, root: s.workDir, shown: 'the work folder', rootIsDir: true, pattern: s.tree.needlePattern }),
    now: (s) => s.call('grep', { pattern: s.tree.needlePattern }),
  },
  {
    name: `glob ${FILES.toLocaleString('en-US')} files`,
    before: (s) => scanGlob({ kind: 'glob', workDir: s.workDir, root: s.workDir, shown: 'the work folder', pattern: '**/e3/f0[0-4]?.txt' }),
    now: (s) => s.call('glob', { pattern: '**/e3/f0[0-4]?.txt' }),
  },
  {
    name: `read a ${BIG_FILE_MB} MB file`,
    before: (s) => {
      const abs = path.join(s.workDir, 'big.txt');
      const out = readOutcome(fs.readFileSync(abs), { filePath: 'big.txt', shown: 'big.txt', range: undefined });
      // The registry kept the full listing for the UI with writeFileSync.
      fs.writeFileSync(path.join(os.tmpdir(), `corral-bench-loop-${process.pid}.txt`), out.fullOutput ? fullOutputText(out.fullOutput) : '');
      return out;
    },
    now: (s) => s.call('read', { file_path: 'big.txt' }),
  },
];

function check(c: Case, out: ToolOutcome, s: SearchScenario): void {
  // grep also notes the big file it skips (over 50 MB).
  const ok = c.name.startsWith('grep') ? out.content.startsWith(`${s.tree.needleLines.join('\n')}\n[1 file(s) over 50 MB`) : c.name.startsWith('glob') ? out.details?.matches === (FILES / 1000) * 50 : out.details?.total_lines === bigLines;
  if (out.isError || !ok) throw new Error(`${c.name}: unexpected result: ${out.content.slice(0, 300)}`);
}

const line = 'const value = someFunction(argument1, argument2); // an ordinary line of code\n';
const bigLines = Math.floor((BIG_FILE_MB * 1024 * 1024) / line.length);

async function main() {
  console.log(`corral bench:loop — ${os.cpus().length} cores, node ${process.version}, load ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}; ${RUNS} runs of each\n`);
  const t0 = performance.now();
  const s = await startSearchScenario({ files: FILES });
  fs.writeFileSync(path.join(s.workDir, 'big.txt'), line.repeat(bigLines));
  console.log(`tree of ${FILES.toLocaleString('en-US')} files and a ${BIG_FILE_MB} MB file written in ${fmt((performance.now() - t0) / 1000, 1)} s\n`);
  const results: Record<string, { before: ProbeReport<ToolOutcome>[]; now: ProbeReport<ToolOutcome>[] }> = {};
  // The same probes while the host does nothing else: what the machine's load alone costs.
  const control: ProbeReport<unknown>[] = [];
  try {
    for (let run = 0; run < RUNS; run++) {
      const idle = await probeWhile(() => new Promise((r) => setTimeout(r, 1000)), s.probes);
      control.push(idle);
      console.log(describeReport(`nothing running (control), run ${run + 1}`, idle));
      for (const c of cases) {
        const r = (results[c.name] ??= { before: [], now: [] });
        // Alternate which goes first, so neither always runs on a warmer cache.
        const order = run % 2 === 0 ? (['before', 'now'] as const) : (['now', 'before'] as const);
        for (const way of order) {
          const report = await probeWhile(way === 'before' ? async () => c.before(s) : () => c.now(s), s.probes);
          check(c, report.value, s);
          r[way].push(report);
          console.log(describeReport(`${c.name}, ${way.padEnd(6)} (run ${run + 1})`, report));
        }
      }
    }
  } finally {
    await s.close();
    fs.rmSync(path.join(os.tmpdir(), `corral-bench-loop-${process.pid}.txt`), { force: true });
  }

  const med = (xs: number[]) => percentile(xs, 50);
  const row = (reports: ProbeReport<unknown>[]) => {
    const loop = (k: 'p99' | 'max') => fmt(med(reports.map((r) => r.loop[k])), 1);
    const probe = (name: string) => fmt(med(reports.map((r) => Math.max(...(r.probes[name]?.ms ?? [Number.NaN])))), 1);
    return `loop delay p99 ${loop('p99')} / max ${loop('max')} ms; slowest bash round trip ${probe('roundTrip')} ms; slowest GET /v1/sessions ${probe('listSessions')} ms; took ${fmt(med(reports.map((r) => r.durationMs)), 0)} ms`;
  };
  console.log(`\nmedians of ${RUNS} runs (load now ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}):`);
  console.log(`  nothing running (control)\n    ${row(control)}`);
  for (const [name, r] of Object.entries(results)) {
    console.log(`  ${name}\n    before: ${row(r.before)}\n    now:    ${row(r.now)}`);
  }
}

await main();
