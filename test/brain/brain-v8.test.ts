import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { forkBrain } from '../../main/brain/supervisor';
import { BRAIN_V8_FLAGS } from '../../main/brain/brain-v8';
import { tmpDir } from '../helpers/tmp';

describe('brain V8 flags', () => {
  it('a forked brain starts with its young generation at 8 MB per semi-space, and the caller’s flags after', async () => {
    const script = path.join(tmpDir('corral-brain-v8-'), 'report.mjs');
    fs.writeFileSync(
      script,
      "import v8 from 'node:v8';\n" +
        "const young = v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space');\n" +
        'process.send({ argv: process.execArgv, youngBytes: young.space_size }, () => process.exit(0));\n',
    );
    const child = forkBrain(script, 'sesn_v8', ['--stack-size=2000']);
    const got = await new Promise<{ argv: string[]; youngBytes: number }>((resolve) => child.onMessage((m) => resolve(m as never)));
    expect(BRAIN_V8_FLAGS).toEqual(['--min-semi-space-size=8']);
    expect(got.argv).toEqual(['--min-semi-space-size=8', '--stack-size=2000']);
    // V8's default start is 1 MB per semi-space (new_space about 1 MB): the flag took effect.
    expect(got.youngBytes).toBeGreaterThanOrEqual(8 * 1024 * 1024);
  });
});
