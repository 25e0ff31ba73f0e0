import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBrainHost, textOf, type BrainTestHost } from '../helpers/brain-host';
import { backendTurn, handsEnv } from '../helpers/hands-env';

let t: BrainTestHost;
let adb: Record<string, string>;
let releaseTurn: (() => void) | undefined;
beforeAll(async () => {
  releaseTurn = await backendTurn('adb'); // adb-*.test.ts kill and revive the adb backend
  adb = handsEnv('adb');
  process.env.ANDROID_ADB_SERVER_PORT = adb.ANDROID_ADB_SERVER_PORT;
  t = await startBrainHost([
    { blocks: [{ type: 'tool_use', name: 'write', input: { file_path: 'hello.txt', content: 'on the phone' } }] },
    { blocks: [{ type: 'tool_use', name: 'bash', input: { command: 'cat hello.txt; echo oops >&2; (exit 3)' } }] },
    { blocks: [{ type: 'tool_use', name: 'screenshot', input: {} }] },
    { blocks: [{ type: 'text', text: 'I can see the screen.' }] },
  ]);
}, 180_000);
afterAll(async () => {
  await t?.close();
  releaseTurn?.();
});

describe('an Android device as a session hand', () => {
  it('runs the built-in tools and returns a screenshot to the model as an image', async () => {
    const env = t.host.environments.create({
      name: 'phone',
      config: { type: 'adb', serial: adb.CORRAL_TEST_ADB_SERIAL, adb_port: Number(adb.ANDROID_ADB_SERVER_PORT) },
      metadata: {},
      description: null,
    });
    const { session } = t.host.log.createSession({ environment_id: env.id, record: { agent: { model: { id: 'm' }, tools: [{ type: 'agent_toolset_20260401' }] } } });
    t.host.log.emitEvent(session.id, { type: 'user.message', content: [{ type: 'text', text: 'look at the phone' }] });
    const events = await t.settled(session.id, 60_000);
    const results = events.filter((e) => e.type === 'agent.tool_result');
    expect(results.map((r) => r.is_error)).toEqual([false, false, false]);
    expect(textOf(results[1])).toContain('on the phone');
    expect(textOf(results[1])).toContain('oops');
    expect(textOf(results[1])).toContain('[exit code 3]');
    expect(events.find((e) => e.type === 'hand.ready')).toMatchObject({ kind: 'adb' });
    // A device serves many sessions: without a working_dir each gets a folder of its own under /data/local/tmp/corral.
    const own = path.join(adb.CORRAL_TEST_ADB_DEVICE_ROOT!, 'data/local/tmp/corral', session.id, 'hello.txt');
    expect(fs.readFileSync(own, 'utf8')).toBe('on the phone');
    // The screenshot tool was offered, and its PNG went to the model as an image block.
    expect(t.model.requests[0]!.body.tools.map((x: { name: string }) => x.name)).toContain('screenshot');
    const shot = (results[2]!.content as { type: string; source?: { media_type: string; data: string } }[]).find((b) => b.type === 'image')!;
    expect(shot.source!.media_type).toBe('image/png');
    expect(Buffer.from(shot.source!.data, 'base64').subarray(1, 4).toString()).toBe('PNG');
    const last = t.model.requests[3]!.body.messages.at(-1).content[0];
    expect(last.type).toBe('tool_result');
    expect(last.content.some((b: { type: string }) => b.type === 'image')).toBe(true);
  }, 120_000);
});
