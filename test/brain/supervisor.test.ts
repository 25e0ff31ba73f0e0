import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createHost, type Host } from '../../main/host';
import { fakeBrains, repliesOf } from '../helpers/fake-brain';
import { newId } from '../../main/db/ids';
import { tmpDir } from '../helpers/tmp';

// When the host starts a brain, and when it does not. The host decides from the events it sees
// appended, never by reading a session's log: a long session costs a wake nothing.

let host: Host;
let brains: ReturnType<typeof fakeBrains>;
let dataDir: string;
beforeEach(async () => {
  brains = fakeBrains();
  dataDir = tmpDir();
  host = createHost({ dataDir, brains: { spawn: brains.spawn, maxRestartsPerMinute: 3 } });
  await host.started;
});
afterEach(() => host.close());

const message = (text = 'hi') => ({ type: 'user.message', content: [{ type: 'text', text }] });
const of = (id: string) => brains.made.filter((b) => b.sessionId === id);

/** A session with a long log and nothing pending, and no brain. */
function longSession(events = 3000): string {
  const { session } = host.log.createSession({ record: { agent: {} } });
  const batch = Array.from({ length: events }, (_, i) => (i % 2 ? { type: 'agent.message', content: [{ type: 'text', text: `reply ${i}` }] } : { type: 'span.model_request_end', is_error: false }));
  for (let i = 0; i < batch.length; i += 500) host.log.emitEvents(session.id, batch.slice(i, i + 500));
  return session.id;
}

describe('the supervisor', () => {
  it('starts a brain for input, without reading the log; other events start none', () => {
    const id = longSession();
    const reads = vi.spyOn(host.log, 'getEvents');
    host.log.emitEvent(id, { type: 'session.updated' });
    host.log.emitEvent(id, { type: 'user.interrupt' }); // the session is idle: nothing to interrupt
    host.log.emitEvent(id, { type: 'hand.ready', hand: 'main' });
    expect(of(id)).toHaveLength(0);
    host.log.emitEvent(id, message());
    expect(of(id)).toHaveLength(1);
    // Input while it runs goes to that brain (a second brain would run the session twice).
    host.log.emitEvent(id, message('more'));
    expect(of(id)).toHaveLength(1);
    expect(of(id)[0]!.received.filter((m) => m.t === 'events').flatMap((m) => (m.t === 'events' ? m.events.map((e) => e.type) : []))).toEqual(['user.message']);
    expect(reads).not.toHaveBeenCalled();
  });

  it('a brain that exits cleanly having seen every input is not replaced; one that missed input is', () => {
    const id = longSession();
    const reads = vi.spyOn(host.log, 'getEvents');
    const first = host.log.emitEvent(id, message());
    const brain = of(id)[0]!;
    brain.say({ t: 'idle', through: first.seq });
    brain.exit(0);
    expect(of(id)).toHaveLength(1);
    // Input arrives as the next brain leaves (the message crossed its exit): a fresh one starts.
    const second = host.log.emitEvent(id, message('again'));
    const next = of(id)[1]!;
    next.say({ t: 'idle', through: second.seq });
    const third = host.log.emitEvent(id, message('and again'));
    next.exit(0);
    expect(of(id)).toHaveLength(3);
    of(id)[2]!.say({ t: 'idle', through: third.seq });
    of(id)[2]!.exit(0);
    expect(of(id)).toHaveLength(3);
    expect(reads).not.toHaveBeenCalled();
  });

  it('input that wakes a brain lingering after its turn comes with the agent and the hands; input mid-turn does not', () => {
    const { session } = host.log.createSession({ record: { agent: { name: 'the agent', model: { id: 'm' } } } });
    const id = session.id;
    const first = host.log.emitEvent(id, message());
    const brain = of(id)[0]!;
    host.log.emitEvent(id, message('while it works'));
    const sent = () => brain.received.filter((m) => m.t === 'events');
    expect(sent().map((m) => m.t === 'events' && m.turn)).toEqual([undefined]);
    brain.say({ t: 'idle', through: first.seq + 1 });
    host.log.emitEvent(id, { type: 'session.updated', title: 'not input' });
    host.log.emitEvent(id, message('next turn'));
    const last = host.log.emitEvent(id, message('and one more before it says idle'));
    // Its turn logged as over is enough: its `idle` message may still be on the way.
    host.log.emitEvent(id, { type: 'session.status_idle', stop_reason: { type: 'end_turn' }, stop_details: null, handled_through: last.seq });
    host.log.emitEvent(id, message('right after'));
    const [, updated, next, more, idle, after] = sent();
    expect(updated).toMatchObject({ events: [{ type: 'session.updated' }] });
    expect(updated).not.toHaveProperty('turn');
    expect(next).toMatchObject({ events: [{ type: 'user.message' }], turn: { agent: { name: 'the agent' }, hands: host.hands.list(id) } });
    expect(more).not.toHaveProperty('turn');
    expect(idle).not.toHaveProperty('turn');
    expect(after).toMatchObject({ events: [{ type: 'user.message' }], turn: { agent: { name: 'the agent' } } });
  });

  it('a crashed brain is replaced (the fresh one decides), until it crashes too often', () => {
    const id = longSession();
    const reads = vi.spyOn(host.log, 'getEvents');
    host.log.emitEvent(id, message());
    of(id)[0]!.exit(null, 'SIGKILL');
    expect(of(id)).toHaveLength(2);
    // Even one that had said it was idle: a crash is not a clean exit.
    of(id)[1]!.say({ t: 'idle', through: 1_000_000 });
    of(id)[1]!.exit(1);
    expect(of(id)).toHaveLength(3);
    of(id)[2]!.exit(null, 'SIGSEGV');
    expect(of(id)).toHaveLength(4);
    of(id)[3]!.exit(null, 'SIGKILL');
    // The fourth crash in a minute (the limit here is 3): stopped with an error, no new brain.
    expect(of(id)).toHaveLength(4);
    const tail = host.log.getEvents(id, { order: 'desc', limit: 2 }).reverse();
    expect(tail.map((e) => e.type)).toEqual(['session.error', 'session.status_idle']);
    expect(JSON.stringify(tail[0]!.error)).toMatch(/4 times in a minute/);
    // New input starts one again.
    host.log.emitEvent(id, message('try again'));
    expect(of(id)).toHaveLength(5);
    expect(reads).toHaveBeenCalledTimes(1); // the test's own read above
  });

  it('at start, wakes the sessions that were running or had input no brain picked up', async () => {
    const running = longSession(10);
    host.log.emitEvent(running, { type: 'session.status_running' });
    const waiting = longSession(10);
    host.log.emitEvent(waiting, message());
    // Input with other events after it (a hand attached before any brain ran) still waits.
    const behind = longSession(10);
    host.log.emitEvent(behind, message());
    host.log.emitEvent(behind, { type: 'session.updated' });
    const idle = longSession(10);
    const answered = longSession(10);
    host.log.emitEvent(answered, message());
    host.log.emitEvent(answered, { type: 'session.status_idle', stop_reason: { type: 'end_turn' }, handled_through: 11 });
    host.log.emitEvent(answered, { type: 'session.updated' });
    await host.close();
    brains = fakeBrains();
    host = createHost({ dataDir, brains: { spawn: brains.spawn } });
    await host.started;
    expect(brains.made.map((b) => b.sessionId).sort()).toEqual([running, waiting, behind].sort());
    expect(of(idle)).toHaveLength(0);
    expect(of(answered)).toHaveLength(0);
  });

  it('records a tool call\'s result as the call ends, and answers with it (not twice)', async () => {
    const id = longSession(10);
    // The host runs only calls in the log.
    const call = newId.event();
    host.log.emitEvent(id, { type: 'agent.tool_use', id: call, name: 'bash', input: { command: 'echo from the hand' }, model_tool_use_id: 'toolu_one' });
    host.log.emitEvent(id, message());
    const brain = of(id)[0]!;
    brain.say({ t: 'req', id: 1, op: 'execute', args: { name: 'bash', input: { command: 'echo from the hand' }, toolUseId: call } });
    await until(() => repliesOf(brain).has(1));
    const reply = repliesOf(brain).get(1)!;
    expect(reply).toMatchObject({ ok: true, value: { type: 'agent.tool_result', tool_use_id: call, is_error: false } });
    const logged = host.log.getEvents(id, { types: ['agent.tool_result'] });
    expect(logged).toHaveLength(1);
    expect(JSON.stringify(logged[0]!.content)).toContain('from the hand');
    // The brain got it in the reply; pushes carried the hand's own events only.
    const pushed = brain.received.flatMap((m) => (m.t === 'events' ? m.events.map((e) => e.type) : []));
    expect(pushed).toEqual(['hand.provisioning', 'hand.ready']);
  });

  it('a call that is not in the log is refused, and nothing runs', async () => {
    const id = longSession(10);
    host.log.emitEvent(id, message());
    const brain = of(id)[0]!;
    const call = newId.event();
    brain.say({ t: 'req', id: 1, op: 'execute', args: { name: 'bash', input: { command: 'echo never' }, toolUseId: call } });
    await until(() => repliesOf(brain).has(1));
    expect(repliesOf(brain).get(1)).toMatchObject({ ok: false, error: expect.stringContaining('not a logged tool call') });
    expect(host.log.getEvents(id, { types: ['agent.tool_result', 'hand.provisioning'] })).toHaveLength(0);
  });

  it('a brain that dies during a call: the call is stopped, its outcome recorded, and the fresh brain told', async () => {
    const id = longSession(10);
    const call = newId.event();
    host.log.emitEvent(id, { type: 'agent.tool_use', id: call, name: 'bash', input: { command: 'sleep 20; echo finished' }, model_tool_use_id: 'toolu_two' });
    host.log.emitEvent(id, message());
    of(id)[0]!.say({ t: 'req', id: 1, op: 'execute', args: { name: 'bash', input: { command: 'sleep 20; echo finished' }, toolUseId: call } });
    await until(() => host.log.getEvents(id, { types: ['hand.ready'] }).length > 0);
    of(id)[0]!.exit(null, 'SIGKILL');
    expect(of(id)).toHaveLength(2);
    await until(() => host.log.getEvents(id, { types: ['agent.tool_result'] }).length > 0);
    const [result] = host.log.getEvents(id, { types: ['agent.tool_result'] });
    expect(result).toMatchObject({ tool_use_id: call, is_error: true });
    expect(JSON.stringify(result!.content)).not.toContain('finished');
    expect(of(id)[1]!.received.flatMap((m) => (m.t === 'events' ? m.events.map((e) => e.seq) : []))).toContain(result!.seq);
  });
});

async function until(cond: () => boolean, timeoutMs = 10_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 10));
  }
}
