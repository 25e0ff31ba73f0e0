import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_GLOB_RESULTS } from '../../main/hands/tools/glob';
import { describeReport, probeWhile } from '../helpers/loop-probe';
import { startSearchScenario, type SearchScenario } from '../helpers/search-scenario';

/**
 * One session greps and globs a tree of 100,000 files on its local hand while another session's
 * tool round trips and `GET /v1/sessions` are made over and over. The search runs on a worker
 * thread, so those calls are answered while it runs; the figures (event-loop delay, latencies)
 * are printed, not asserted: speed goals live in `npm run bench:loop`.
 */

const FILES = 100_000;
let s: SearchScenario;

beforeAll(async () => {
  s = await startSearchScenario({ files: FILES });
}, 120_000);
afterAll(async () => {
  await s?.close();
});

describe('a big search on one session', () => {
  it('greps 100k files with the right results while the host keeps answering the other session and the API', async () => {
    const r = await probeWhile(() => s.call('grep', { pattern: s.tree.needlePattern }), s.probes);
    console.log(describeReport(`grep of ${FILES.toLocaleString('en-US')} files`, r));

    expect(r.value.isError, r.value.content).toBe(false);
    expect(r.value.content.split('\n')).toEqual(s.tree.needleLines);
    expect(r.value.details).toMatchObject({ matches: 100, files_with_matches: 100, files_searched: FILES, skipped_binary: 0, walk_stopped: false });
    for (const [name, probe] of Object.entries(r.probes)) {
      expect(probe.failures, name).toEqual([]);
      // The old synchronous grep held the loop from start to end: nothing else finished meanwhile.
      expect(probe.completedDuring, `${name} calls answered during the grep`).toBeGreaterThan(0);
    }
  }, 120_000);

  it('globs 100k files with the cap and its note while the host keeps answering', async () => {
    const r = await probeWhile(() => s.call('glob', { pattern: '**/e3/f0[0-4]?.txt' }), s.probes);
    console.log(describeReport(`glob of ${FILES.toLocaleString('en-US')} files`, r));

    expect(r.value.isError, r.value.content).toBe(false);
    const lines = r.value.content.split('\n');
    expect(lines).toHaveLength(MAX_GLOB_RESULTS + 1);
    expect(lines[0]).toBe('d000/e3/f000.txt');
    expect(lines[MAX_GLOB_RESULTS - 1]).toBe('d019/e3/f049.txt');
    expect(lines[MAX_GLOB_RESULTS]).toMatch(/4,000 more matching files not listed \(5,000 in all\)/);
    expect(r.value.details).toMatchObject({ matches: 5000, listed: MAX_GLOB_RESULTS, walk_stopped: false });
    for (const [name, probe] of Object.entries(r.probes)) {
      expect(probe.failures, name).toEqual([]);
      expect(probe.completedDuring, `${name} calls answered during the glob`).toBeGreaterThan(0);
    }
  }, 120_000);
});
