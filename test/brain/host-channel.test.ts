import { afterEach, describe, expect, it } from 'vitest';
import { createHostChannel } from '../../main/brain/host-channel';
import type { BrainToHost } from '../../main/brain/ipc-protocol';
import { startBrainHost, type BrainTestHost } from '../helpers/brain-host';

const tick = () => new Promise((r) => setImmediate(r));

describe("the brain's channel to the host", () => {
  it('keeps what is sent during a hold and sends it in one message when released', async () => {
    const written: BrainToHost[] = [];
    const channel = createHostChannel((m, done) => (written.push(m), done()));
    channel.notify({ t: 'idle', through: 1 });
    const release = channel.hold();
    channel.notify({ t: 'idle', through: 2 });
    channel.flush(); // an explicit flush does not break a hold
    await tick();
    expect(written).toEqual([]);
    const second = channel.hold();
    release();
    await tick();
    expect(written).toEqual([]); // another hold is still on
    second();
    second(); // a release counts once
    await tick();
    expect(written).toEqual([{ t: 'batch', messages: [{ t: 'idle', through: 1 }, { t: 'idle', through: 2 }] }]);
    channel.notify({ t: 'idle', through: 3 });
    await tick();
    expect(written.at(-1)).toEqual({ t: 'idle', through: 3 });
    await channel.sent();
  });
});

let t: BrainTestHost | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

describe('a tool round trip on the wire', () => {
  it("sends a call's append with the request's end and the call itself, in one message", async () => {
    // The model streams its events 20 ms apart: the call's block ends well before the reply does.
    t = await startBrainHost((req) => {
      const results = req.body.messages.flatMap((m: { content: { type: string }[] }) => m.content).filter((b: { type: string }) => b.type === 'tool_result').length;
      if (results === 0) return { blocks: [{ type: 'tool_use', name: 'bash', input: { command: 'echo hi' } }], chunkDelayMs: 20 };
      return { blocks: [{ type: 'text', text: 'done' }] };
    });
    const brains = t.host.brains as unknown as { onBrainMessage(s: string, b: unknown, raw: unknown, inBatch?: boolean): void };
    const handle = brains.onBrainMessage.bind(brains);
    const messages: string[][] = [];
    const name = (m: { t: string; op?: string; args?: { events?: { type: string }[] } }) =>
      m.t === 'req' ? (m.op === 'emit' ? `emit ${m.args!.events!.map((e) => e.type).join(',')}` : m.op!) : m.t;
    brains.onBrainMessage = (s, b, raw, inBatch) => {
      const m = raw as { t: string; messages?: unknown[] };
      if (!inBatch) messages.push(m.t === 'batch' ? m.messages!.map((x) => name(x as never)) : [name(m as never)]);
      handle(s, b, raw, inBatch);
    };
    const id = t.newSession('go');
    const events = await t.settled(id);
    expect(events.some((e) => e.type === 'agent.tool_result' && !e.is_error)).toBe(true);
    expect(messages).toContainEqual(['emit agent.tool_use', 'emit span.model_request_end', 'execute']);
    expect(messages).not.toContainEqual(['emit agent.tool_use']);
  });
});
