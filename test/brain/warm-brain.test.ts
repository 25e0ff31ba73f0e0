import { afterEach, describe, expect, it, vi } from 'vitest';
import type { EventSlice } from '../../main/session/types';
import { startBrainHost, textOf, type BrainTestHost } from '../helpers/brain-host';
import { tmpDir } from '../helpers/tmp';

// A brain keeps its view of the log between turns and between steps: it reads the log once, then
// learns of each appended event as it happens.

let t: BrainTestHost | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

describe('a warm brain', () => {
  it('answers the next message in the same process without reading the log again', async () => {
    t = await startBrainHost((req) => {
      const last = req.body.messages.at(-1);
      if (!last.content.some((b: { type: string }) => b.type === 'tool_result')) return { blocks: [{ type: 'tool_use', name: 'bash', input: { command: 'echo hi' } }] };
      return { blocks: [{ type: 'text', text: `done after ${req.body.messages.length} messages` }] };
    });
    const reads: EventSlice[] = [];
    const getEventPage = t.host.log.getEventPage.bind(t.host.log);
    // A brain reads its log in pages (the test's own polling and the hand registry read otherwise).
    t.host.log.getEventPage = vi.fn((id: string, slice: EventSlice = {}) => {
      reads.push(slice);
      return getEventPage(id, slice);
    });
    const id = t.newSession('one');
    await t.settled(id);
    const pid = t.host.brains!.pidOf(id);
    // The log was read once for the fresh brain: its first page, read by the host and sent with
    // the bind (brain-prime.ts); a short log, so the brain itself read nothing.
    expect(reads).toEqual([{ from: 1, limit: 1000, maxBytes: 1024 * 1024 }]);
    reads.length = 0;
    t.host.log.emitEvent(id, { type: 'user.message', content: [{ type: 'text', text: 'two' }] });
    const events = await t.settled(id);
    expect(t.host.brains!.pidOf(id)).toBe(pid);
    expect(reads).toEqual([]);
    // …and its view was whole: the second turn's requests carried the first turn.
    expect(events.filter((e) => e.type === 'agent.message').map(textOf)).toEqual(['done after 3 messages', 'done after 7 messages']);
  });

  it('starts its next turn without asking the host anything first, with the agent as updated between turns', async () => {
    t = await startBrainHost((req) => ({ blocks: [{ type: 'text', text: `tools: ${req.body.tools.map((x: { name: string }) => x.name).filter((n: string) => n.startsWith('my_')).join(',')}` }] }));
    const id = t.newSession('one');
    await t.settled(id);
    const pid = t.host.brains!.pidOf(id);
    // What the host serves a brain (supervisor.ts), by operation.
    const serve = vi.spyOn(t.host.brains as unknown as { serve(sessionId: string, brain: unknown, m: { op: string }): void }, 'serve');
    const tool = { type: 'custom', name: 'my_tool', description: 'added between turns', input_schema: { type: 'object', properties: {} } };
    t.host.log.updateSessionRecord(id, (r) => ({ ...r, agent: { ...(r.agent as object), tools: [...((r.agent as { tools: unknown[] }).tools), tool] } }));
    t.host.log.emitEvent(id, { type: 'session.updated', agent: (t.host.log.getSession(id).record as { agent: unknown }).agent });
    t.host.log.emitEvent(id, { type: 'user.message', content: [{ type: 'text', text: 'two' }] });
    const events = await t.settled(id);
    expect(t.host.brains!.pidOf(id)).toBe(pid);
    // The agent and the hands came with the message (brain-prime.ts, turnPrime): only appends.
    expect(new Set(serve.mock.calls.map(([, , m]) => m.op))).toEqual(new Set(['emit']));
    expect(events.filter((e) => e.type === 'agent.message').map(textOf)).toEqual(['tools: ', 'tools: my_tool']);
  });

  it('sees a hand attached mid-turn in its next request', async () => {
    const otherDir = tmpDir();
    let attach = () => {};
    t = await startBrainHost((req, i) => {
      const hands = req.body.tools.find((x: { name: string }) => x.name === 'bash').input_schema.properties.hand?.enum;
      if (i === 0) {
        expect(hands).toBeUndefined();
        attach(); // while this request streams
        return { blocks: [{ type: 'tool_use', name: 'bash', input: { command: 'true' } }] };
      }
      return { blocks: [{ type: 'text', text: `hands: ${hands?.join(',')}` }] };
    });
    const env = t.host.environments.create({ name: 'second', config: { type: 'local', working_dir: otherDir }, metadata: {}, description: null });
    const id = t.newSession('go');
    attach = () => t!.host.hands.attach(id, env.id, 'second');
    const events = await t.settled(id);
    expect(textOf(events.filter((e) => e.type === 'agent.message').at(-1))).toBe('hands: main,second');
  });
});
