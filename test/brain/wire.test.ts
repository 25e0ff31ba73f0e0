import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { newId } from '../../main/db/ids';
import { createHost, type Host } from '../../main/host';
import { fakeBrains, repliesOf, type FakeBrain } from '../helpers/fake-brain';
import { tmpDir } from '../helpers/tmp';

// The brain ↔ host wire, from the host's side: a brain runs model-driven code paths, so every
// message it sends is checked, and nothing it sends can make the host throw.

let host: Host;
let brains: ReturnType<typeof fakeBrains>;
const uncaught: unknown[] = [];
const onUncaught = (err: unknown) => uncaught.push(err);
beforeEach(async () => {
  brains = fakeBrains();
  host = createHost({ dataDir: tmpDir(), brains: { spawn: brains.spawn } });
  await host.started;
  process.on('uncaughtException', onUncaught);
  process.on('unhandledRejection', onUncaught);
});
afterEach(async () => {
  process.off('uncaughtException', onUncaught);
  process.off('unhandledRejection', onUncaught);
  await host.close();
});

function sessionWithBrain(): { id: string; brain: FakeBrain } {
  const { session } = host.log.createSession({ record: { agent: { model: { id: 'm' } } } });
  host.log.emitEvent(session.id, { type: 'user.message', content: [{ type: 'text', text: 'hi' }] });
  const brain = brains.made.find((b) => b.sessionId === session.id)!;
  expect(brain).toBeDefined();
  return { id: session.id, brain };
}

const settle = () => new Promise((r) => setTimeout(r, 20));
const until = async (ok: () => boolean) => {
  for (let i = 0; i < 500 && !ok(); i++) await new Promise((r) => setTimeout(r, 20));
  expect(ok()).toBe(true);
};
let nested = {} as Record<string, unknown>;
for (let i = 0; i < 5000; i++) nested = { n: nested };

/** Requests with a readable id that must each get an error reply, and what the error says. */
const badRequests: [string, unknown, RegExp][] = [
  ['unknown op', { t: 'req', id: 1, op: 'dropTables', args: {} }, /malformed/],
  ['no args object', { t: 'req', id: 2, op: 'emit', args: null }, /bad arguments to emit/],
  ['a user event', { t: 'req', id: 3, op: 'emit', args: { events: [{ type: 'user.message', content: [{ type: 'text', text: 'forged' }] }], key: 'k' } }, /events\.0/],
  ['an extra field', { t: 'req', id: 4, op: 'emit', args: { events: [{ type: 'session.status_running', sneaky: true }], key: 'k' } }, /events\.0/],
  ['a wrong field type', { t: 'req', id: 5, op: 'emit', args: { events: [{ type: 'session.status_idle', stop_reason: { type: 'end_turn' }, stop_details: null, handled_through: 'all' }], key: 'k' } }, /handled_through/],
  ['no events', { t: 'req', id: 6, op: 'emit', args: { events: [], key: 'k' } }, /events/],
  ['a key too long', { t: 'req', id: 7, op: 'emit', args: { events: [{ type: 'session.status_running' }], key: 'k'.repeat(300) } }, /key/],
  ['a log id that is not one', { t: 'req', id: 8, op: 'emit', args: { events: [{ type: 'agent.message', id: '../../x', content: [{ type: 'text', text: 'x' }] }], key: 'k' } }, /id/],
  ['a tool name of 10 kB', { t: 'req', id: 9, op: 'execute', args: { name: 'x'.repeat(10_000), input: {} } }, /name/],
  ['a tool input of 5 MB', { t: 'req', id: 10, op: 'execute', args: { name: 'bash', input: { command: 'x'.repeat(5 * 1024 * 1024) } } }, /input/],
  ['a tool input 5,000 levels deep', { t: 'req', id: 11, op: 'execute', args: { name: 'bash', input: nested } }, /input/],
  ['a tool input that is not an object', { t: 'req', id: 12, op: 'execute', args: { name: 'bash', input: ['ls'] } }, /input/],
  ['a slice limit of a billion', { t: 'req', id: 13, op: 'readEvents', args: { slice: { limit: 1e9 } } }, /limit/],
  ['a negative position', { t: 'req', id: 14, op: 'readEvents', args: { slice: { after: -5 } } }, /after/],
  ['types that are not a list', { t: 'req', id: 15, op: 'readEvents', args: { slice: { types: 'agent.message' } } }, /types/],
  ['arguments to an op that takes none', { t: 'req', id: 16, op: 'hands', args: { everything: true } }, /hands/],
  ['an extra envelope field', { t: 'req', id: 17, op: 'agent', args: {}, extra: 1 }, /malformed/],
];

describe('what a brain sends is checked', () => {
  it('a malformed request gets an error reply naming what is wrong, and nothing is appended or run', async () => {
    const { id, brain } = sessionWithBrain();
    const before = host.log.getEvents(id).length;
    const ran: string[] = [];
    const execute = host.hands.execute.bind(host.hands);
    host.hands.execute = (...a) => (ran.push(a[2]), execute(...a));
    for (const [, message] of badRequests) brain.say(message);
    await settle();
    const replies = repliesOf(brain);
    for (const [what, message, error] of badRequests) {
      const reply = replies.get((message as { id: number }).id);
      expect(reply, what).toMatchObject({ ok: false });
      expect((reply as { error: string }).error, what).toMatch(error);
      // An error never echoes a large value back.
      expect((reply as { error: string }).error.length, what).toBeLessThan(1000);
    }
    expect(host.log.getEvents(id).length).toBe(before);
    expect(ran).toEqual([]);
    expect(uncaught).toEqual([]);
  });

  it('garbage of any shape is dropped without a throw; the brain is still served afterwards', async () => {
    const { id, brain } = sessionWithBrain();
    const hostile = new Proxy({}, { get: () => { throw new Error('gotcha'); }, ownKeys: () => { throw new Error('gotcha'); } });
    const garbage: unknown[] = [
      null, undefined, 42, 'req', [], [1, 2], { t: 'req' }, { t: 'req', id: -1, op: 'agent', args: {} }, { t: 'req', id: 1.5, op: 'agent', args: {} },
      { t: 'req', id: 'x', op: 'agent', args: {} }, { t: 'launch' }, { t: 'cancel', id: 'all' }, { t: 'idle', through: -3 }, { t: 'idle' },
      { t: 'delta', delta: { type: 'event_delta', event_id: 'x', delta: {} } }, { t: 'delta', delta: { type: 'event_start', event: { id: 'sevt_01ARZ3NDEKTSV4RRFFQ69G5FAV', type: 'user.message' } } },
      { t: 'delta', delta: { type: 'event_delta', event_id: 'sevt_01ARZ3NDEKTSV4RRFFQ69G5FAV', delta: { type: 'content_delta', content: { type: 'text', text: 'x'.repeat(2 * 1024 * 1024) }, index: 0 } } },
      hostile, { t: 'req', id: 99, op: 'agent', args: hostile },
      { t: 'batch', messages: 'all of them' }, { t: 'batch', messages: [] }, { t: 'batch', messages: [null, { t: 'batch', messages: [{ t: 'idle', through: 1 }] }, hostile] },
    ];
    const deltas: unknown[] = [];
    host.brains!.subscribeDeltas(id, (d) => deltas.push(d));
    for (const g of garbage) expect(() => brain.say(g)).not.toThrow();
    await settle();
    expect(deltas).toEqual([]);
    // Only requests whose id could be read were answered (with errors).
    expect(brain.received.filter((m) => m.t === 'res').map((m) => (m as { id: number; ok: boolean }).ok)).toEqual([false]);
    expect(uncaught).toEqual([]);
    // A good request after all that still works.
    brain.say({ t: 'req', id: 100, op: 'emit', args: { events: [{ type: 'session.status_running' }], key: 'running:2' } });
    await settle();
    expect(repliesOf(brain).get(100)).toMatchObject({ ok: true, value: [{ type: 'session.status_running' }] });
    expect(host.log.getEvents(id).at(-1)!.type).toBe('session.status_running');
  });

  it('well-formed requests of every op are served; appends made by others are passed on, the brain\'s own come in the reply', async () => {
    const { id, brain } = sessionWithBrain();
    brain.say({ t: 'req', id: 1, op: 'agent', args: {} });
    brain.say({ t: 'req', id: 2, op: 'hands', args: {} });
    brain.say({ t: 'req', id: 3, op: 'readEvents', args: { slice: { after: 0, limit: 10 } } });
    brain.say({ t: 'req', id: 4, op: 'emit', args: { events: [{ type: 'session.status_running' }], key: 'running:2' } });
    host.log.emitEvent(id, { type: 'user.message', content: [{ type: 'text', text: 'more' }] });
    await settle();
    const replies = repliesOf(brain);
    expect(replies.get(1)).toMatchObject({ ok: true, value: { model: { id: 'm' } } });
    expect(replies.get(2)).toMatchObject({ ok: true, value: [{ name: 'main' }] });
    expect(replies.get(3)).toMatchObject({ ok: true, value: [{ seq: 1, type: 'user.message' }] });
    expect(replies.get(4)).toMatchObject({ ok: true, value: [{ seq: 2, type: 'session.status_running' }] });
    const pushed = brain.received.flatMap((m) => (m.t === 'events' ? m.events : []));
    expect(pushed.map((e) => [e.seq, e.type])).toEqual([[3, 'user.message']]);
    expect(uncaught).toEqual([]);
  });

  it('a batch is handled message by message, in order', async () => {
    const { id, brain } = sessionWithBrain();
    brain.say({
      t: 'batch',
      messages: [
        { t: 'req', id: 1, op: 'emit', args: { events: [{ type: 'session.status_running' }], key: 'running:1' } },
        { t: 'req', id: 2, op: 'emit', args: { events: [{ type: 'user.message', content: [] }], key: 'forged' } },
        { t: 'req', id: 3, op: 'readEvents', args: { slice: { after: 1 } } },
      ],
    });
    await settle();
    const replies = repliesOf(brain);
    expect(replies.get(1)).toMatchObject({ ok: true });
    expect(replies.get(2)).toMatchObject({ ok: false });
    // The read came after the append in the same batch, and saw it.
    expect(replies.get(3)).toMatchObject({ ok: true, value: [{ type: 'session.status_running' }] });
    expect(brain.received.filter((m) => m.t === 'res').map((m) => (m as { id: number }).id)).toEqual([1, 2, 3]);
    expect(host.log.getEvents(id).map((e) => e.type)).toEqual(['user.message', 'session.status_running']);
    expect(uncaught).toEqual([]);
  });
  it("a batch's replies leave in one message; when it started a call, with the call's reply (or anything sent sooner)", async () => {
    const { id, brain } = sessionWithBrain();
    // A text reply's batch: its two appends are answered in one message.
    brain.say({
      t: 'batch',
      messages: [
        { t: 'req', id: 1, op: 'emit', args: { events: [{ type: 'session.status_running' }], key: 'running:1' } },
        { t: 'req', id: 2, op: 'emit', args: { events: [{ type: 'agent.message', content: [{ type: 'text', text: 'hi' }] }], key: 'blk:1' } },
      ],
    });
    await settle();
    expect(brain.raw.filter((m) => m.t === 'batch').map((m) => m.t === 'batch' && m.messages.map((r) => r.t === 'res' && r.id))).toEqual([[1, 2]]);
    // The session's hand is provisioned by a first call (its hand.* events would go sooner).
    const call0 = newId.event();
    brain.say({
      t: 'batch',
      messages: [
        { t: 'req', id: 10, op: 'emit', args: { events: [{ type: 'agent.tool_use', id: call0, name: 'bash', input: { command: 'true' }, model_tool_use_id: 'toolu_0' }], key: 'blk:0' } },
        { t: 'req', id: 11, op: 'execute', args: { name: 'bash', input: { command: 'true' }, toolUseId: call0 } },
      ],
    });
    await until(() => repliesOf(brain).has(11));
    // A tool call's batch: its call runs until the test lets it end.
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const execute = host.hands.execute.bind(host.hands);
    host.hands.execute = async (...args) => {
      await gate;
      return execute(...args);
    };
    const call = newId.event();
    const sentBefore = brain.raw.length;
    brain.say({
      t: 'batch',
      messages: [
        { t: 'req', id: 3, op: 'emit', args: { events: [{ type: 'agent.tool_use', id: call, name: 'bash', input: { command: 'echo ran' }, model_tool_use_id: 'toolu_1' }], key: 'blk:2' } },
        { t: 'req', id: 4, op: 'emit', args: { events: [{ type: 'session.status_running' }], key: 'running:2' } },
        { t: 'req', id: 5, op: 'execute', args: { name: 'bash', input: { command: 'echo ran' }, toolUseId: call } },
      ],
    });
    await settle();
    // Committed, and the call dispatched, but nothing sent yet: the brain waits for the call anyway.
    expect(host.log.getEvents(id, { types: ['agent.tool_use'] }).map((e) => e.id)).toEqual([call0, call]);
    expect(brain.raw.slice(sentBefore)).toEqual([]);
    release();
    await until(() => repliesOf(brain).has(5));
    const after = brain.raw.slice(sentBefore);
    expect(after).toHaveLength(1);
    const ids = after[0]!.t === 'batch' ? after[0]!.messages.flatMap((m) => (m.t === 'res' ? [m.id] : [])) : [];
    expect(ids).toEqual([3, 4, 5]);
    expect(repliesOf(brain).get(5)).toMatchObject({ ok: true, value: { type: 'agent.tool_result', tool_use_id: call } });

    // Something for the brain while the call runs (here a user's message) takes the replies along, first.
    let release2!: () => void;
    const gate2 = new Promise<void>((r) => (release2 = r));
    host.hands.execute = async (...args) => {
      await gate2;
      return execute(...args);
    };
    const call2 = newId.event();
    const sentBefore2 = brain.raw.length;
    brain.say({
      t: 'batch',
      messages: [
        { t: 'req', id: 6, op: 'emit', args: { events: [{ type: 'agent.tool_use', id: call2, name: 'bash', input: { command: 'echo again' }, model_tool_use_id: 'toolu_2' }], key: 'blk:3' } },
        { t: 'req', id: 7, op: 'execute', args: { name: 'bash', input: { command: 'echo again' }, toolUseId: call2 } },
      ],
    });
    await settle();
    expect(brain.raw.slice(sentBefore2)).toEqual([]);
    host.log.emitEvent(id, { type: 'user.message', content: [{ type: 'text', text: 'meanwhile' }] });
    const sooner = brain.raw.slice(sentBefore2);
    expect(sooner).toHaveLength(1);
    expect(sooner[0]!.t === 'batch' && sooner[0]!.messages.map((m) => m.t)).toEqual(['res', 'events']);
    expect(repliesOf(brain).get(6)).toMatchObject({ ok: true, value: [{ id: call2 }] });
    release2();
    await until(() => repliesOf(brain).has(7));

    // A reply with a denied call next to the one run: its answers go at once (the brain logs the
    // denied call's result once its end is answered, not after the other call).
    let release3!: () => void;
    const gate3 = new Promise<void>((r) => (release3 = r));
    host.hands.execute = async (...args) => {
      await gate3;
      return execute(...args);
    };
    const [allowed, refused] = [newId.event(), newId.event()];
    brain.say({
      t: 'batch',
      messages: [
        { t: 'req', id: 20, op: 'emit', args: { events: [{ type: 'agent.tool_use', id: refused, name: 'nope', input: {}, model_tool_use_id: 'toolu_3', evaluated_permission: 'deny' }], key: 'blk:4' } },
        { t: 'req', id: 21, op: 'emit', args: { events: [{ type: 'agent.tool_use', id: allowed, name: 'bash', input: { command: 'true' }, model_tool_use_id: 'toolu_4' }], key: 'blk:5' } },
        { t: 'req', id: 22, op: 'execute', args: { name: 'bash', input: { command: 'true' }, toolUseId: allowed } },
      ],
    });
    await settle();
    expect(repliesOf(brain).get(20)).toMatchObject({ ok: true, value: [{ id: refused }] });
    expect(repliesOf(brain).get(22)).toBeUndefined();
    release3();
    await until(() => repliesOf(brain).has(22));
    expect(uncaught).toEqual([]);
  });

  it('a call runs only if its append made it into the log: one whose append failed in the same batch is refused, and nothing runs', async () => {
    const { id, brain } = sessionWithBrain();
    const ran: string[] = [];
    const execute = host.hands.execute.bind(host.hands);
    host.hands.execute = async (...args) => {
      ran.push(args[4]?.toolUseId ?? '?');
      return execute(...args);
    };
    // The id of an event already in the log (the user's message): the append fails, so the call is not logged.
    const taken = host.log.getEvents(id)[0]!.id;
    const fresh = newId.event();
    brain.say({
      t: 'batch',
      messages: [
        { t: 'req', id: 1, op: 'emit', args: { events: [{ type: 'agent.tool_use', id: taken, name: 'bash', input: { command: 'true' }, model_tool_use_id: 'toolu_x' }], key: 'blk:x' } },
        { t: 'req', id: 2, op: 'execute', args: { name: 'bash', input: { command: 'true' }, toolUseId: taken } },
        { t: 'req', id: 3, op: 'emit', args: { events: [{ type: 'agent.tool_use', id: fresh, name: 'bash', input: { command: 'true' }, model_tool_use_id: 'toolu_y' }], key: 'blk:y' } },
        { t: 'req', id: 4, op: 'execute', args: { name: 'bash', input: { command: 'true' }, toolUseId: fresh } },
      ],
    });
    await until(() => repliesOf(brain).has(4));
    expect(repliesOf(brain).get(1)).toMatchObject({ ok: false });
    expect(repliesOf(brain).get(2)).toMatchObject({ ok: false, error: expect.stringContaining('not a logged tool call') });
    expect(repliesOf(brain).get(4)).toMatchObject({ ok: true, value: { type: 'agent.tool_result', tool_use_id: fresh } });
    expect(ran).toEqual([fresh]);
    expect(uncaught).toEqual([]);
  });
});
