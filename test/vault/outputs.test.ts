import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeTextFile } from '../../main/hands/write-text';
import { Redactor } from '../../main/vault/redact';
import type { RecordedRequest, Reply } from '../fixtures/model-server';
import { startBrainHost, type BrainTestHost } from '../helpers/brain-host';
import { tmpDir } from '../helpers/tmp';

const SECRET = `ghp_fulloutput_${Math.random().toString(36).slice(2)}${Math.random().toString(36).slice(2)}`;
const WORD = `'${SECRET.slice(0, 5)}''${SECRET.slice(5)}'`;

describe('full outputs kept in DATA/outputs are redacted like events', () => {
  it('writeTextFile with the stream redactor: a value split across slices and its surrogate neighbours come out right', async () => {
    const dir = tmpDir();
    const r = new Redactor([{ label: 'credential t', values: [SECRET] }]);
    const text = `😀a${SECRET}😀 and again ${encodeURIComponent(SECRET)}${'x😀'.repeat(20)}`;
    for (const slice of [1, 3, 7, 1024]) {
      await writeTextFile(path.join(dir, 'f.txt'), text, slice, 0o600, r.stream());
      const got = fs.readFileSync(path.join(dir, 'f.txt'), 'utf8');
      expect(got, `slices of ${slice}`).toBe(r.redact(text));
      expect(got).not.toContain(SECRET);
      expect(got).toContain('[redacted: credential t]');
    }
  });

  let t: BrainTestHost;
  beforeAll(async () => {
    t = await startBrainHost(script, { hostOptions: { sandbox: false } });
    await t.host.started;
    const v = t.host.vault.createVault({ display_name: 'v' });
    await t.host.vault.createCredential(v.id, { auth: { type: 'git_token', token: SECRET, hosts: ['example.com'] } });
  }, 120_000);
  afterAll(() => t?.close());

  function script(req: RecordedRequest): Reply {
    const results = (req.body.messages as { content: { type: string }[] }[]).flatMap((m) => m.content).filter((b) => b.type === 'tool_result').length;
    // Far more than the model's cap: the full output is kept in a file for the UI.
    if (results === 0) return { blocks: [{ type: 'tool_use', name: 'bash', input: { command: `T=${WORD}; echo "start $T"; seq 1 200000; echo "end $T"` } }] };
    return { blocks: [{ type: 'text', text: 'done' }] };
  }

  it('a long bash output with a vault value: the kept file has the marker, never the value', async () => {
    const id = t.newSession('print');
    const events = await t.settled(id, 60_000);
    const result = events.find((e) => e.type === 'agent.tool_result')!;
    const file = (result.details as { full_output?: { file: string } }).full_output?.file;
    expect(file).toBeDefined();
    const kept = fs.readFileSync(path.join(t.dataDir, 'outputs', id, file!), 'utf8');
    expect(kept).toMatch(/^start \[redacted: credential /);
    expect(kept).toMatch(/\n199999\n/);
    expect(kept).toMatch(/end \[redacted: credential [^\]]+\]\n/);
    expect(kept).not.toContain(SECRET);
    expect(JSON.stringify(events)).not.toContain(SECRET);
  }, 120_000);
});
