import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHost, type Host } from '../../main/host';
import { callThroughWorker, workerResultKey } from '../../main/hands/dial-in/call';
import { resultKey } from '../../main/brain/tool-result-event';
import { sessionCalls } from '../../main/api/ui/calls/sessions';
import { tmpDir } from '../helpers/tmp';

// A call on a self_hosted hand, in-process against a real host and SQLite file (no worker: the
// test plays the worker's part through the same store calls the routes make).

let host: Host;
let envId: string;

beforeAll(() => {
  process.env.CORRAL_WORK_LEASE_TTL_S = '1';
  host = createHost({ dataDir: tmpDir(), workRoot: tmpDir('corral-work-') });
  delete process.env.CORRAL_WORK_LEASE_TTL_S;
  envId = host.environments.create({ name: 'w', config: { type: 'self_hosted' }, metadata: {}, description: null }).id;
});
afterAll(() => host.close());

/** A session with one logged call, as a brain leaves it before `execute`. */
function callInLog(): { sessionId: string; useId: string } {
  const { session } = host.log.createSession({ environment_id: envId, record: { agent: {}, resources: [], vault_ids: [] } }, []);
  const [use] = host.log.emitEvents(session.id, [{ type: 'agent.tool_use', name: 'bash', input: { command: 'true' }, evaluated_permission: 'allow' }]);
  return { sessionId: session.id, useId: use!.id };
}

/** Claims and acks the session's item as a worker would. */
async function claim() {
  const got = await host.dialIn.poll(envId, { blockMs: 999, reclaimMs: 5000, workerId: 'test-worker' });
  expect(host.dialIn.ack(got!.row)).toBe(true);
  return got!.row;
}

describe('callThroughWorker', () => {
  it("uses the brain supervisor's result key, so the worker's answer and the host's are one", () => {
    expect(workerResultKey('sevt_1')).toBe(`brain:${resultKey('sevt_1')}`);
  });

  it("ends with the worker's user.tool_result, which the host's own append then returns", async () => {
    const { sessionId, useId } = callInLog();
    const call = callThroughWorker(host.dialIn, { sessionId, environmentId: envId, toolUseId: useId });
    const item = await claim();
    expect(item.session_id).toBe(sessionId);
    const [answer] = host.log.emitEvents(sessionId, [{ type: 'user.tool_result', tool_use_id: useId, content: [{ type: 'text', text: 'ok' }] }], workerResultKey(useId));
    expect((await call).isError).toBe(false);
    const [again] = host.log.emitEvents(sessionId, [{ type: 'agent.tool_result', tool_use_id: useId, content: [], is_error: true }], workerResultKey(useId));
    expect(again!.id).toBe(answer!.id);
  });

  it('a worker that stops heartbeating: the call fails honestly once its lease runs out, and the item is stopped', async () => {
    const { sessionId, useId } = callInLog();
    const call = callThroughWorker(host.dialIn, { sessionId, environmentId: envId, toolUseId: useId });
    const item = await claim();
    const outcome = await call;
    expect(outcome.isError).toBe(true);
    expect(outcome.content).toContain(`the lease of work item ${item.id} (1 s) ran out`);
    expect(host.dialIn.work.get(item.id)).toMatchObject({ state: 'stopped', stop_reason: 'lease_expired' });
    expect(host.log.getEvents(sessionId, { types: ['hand.lost'] })[0]).toMatchObject({ work_id: item.id });
    // The next call queues a fresh item.
    const next = callThroughWorker(host.dialIn, { sessionId, environmentId: envId, toolUseId: useId, claimTimeoutMs: 50 });
    expect(host.dialIn.work.openFor(sessionId, envId)!.id).not.toBe(item.id);
    expect((await next).details).toMatchObject({ unclaimed: true });
  });

  it('an item its worker stops before answering goes back to the queue; a timeout or an abort stops it', async () => {
    const { sessionId, useId } = callInLog();
    const call = callThroughWorker(host.dialIn, { sessionId, environmentId: envId, toolUseId: useId, timeoutMs: 300 }); // well inside the 1 s lease
    const first = await claim();
    host.dialIn.work.stop(first.id, true, 'stopped_by_worker', Date.now());
    const second = await claim();
    expect(second.id).not.toBe(first.id);
    const timedOut = await call;
    expect(timedOut.details).toMatchObject({ timed_out: true, work_id: second.id });
    expect(host.dialIn.work.get(second.id)).toMatchObject({ state: 'stopping', stop_reason: 'timed_out' });

    // While the stopped item's worker still holds its lease, no second item is queued (two
    // runners would hold one session): the next call waits; aborted, it has no item to stop.
    const ctrl = new AbortController();
    const waiting = callThroughWorker(host.dialIn, { sessionId, environmentId: envId, toolUseId: useId, signal: ctrl.signal });
    expect(host.dialIn.work.openFor(sessionId, envId)).toBeUndefined();
    ctrl.abort();
    expect((await waiting).details).toMatchObject({ interrupted: true, work_id: null });

    // Once that lease runs out, a call queues a fresh item; aborted before a claim, it just stops.
    const ctrl2 = new AbortController();
    const later = callThroughWorker(host.dialIn, { sessionId, environmentId: envId, toolUseId: useId, signal: ctrl2.signal });
    await new Promise((r) => setTimeout(r, 1500));
    const third = host.dialIn.work.openFor(sessionId, envId)!;
    expect(third.id).not.toBe(second.id);
    ctrl2.abort();
    expect((await later).details).toMatchObject({ interrupted: true, work_id: third.id });
    expect(host.dialIn.work.get(third.id)!.state).toBe('stopped'); // never claimed: nothing to shut down
  });

  it('a call no worker claims fails, saying how to start one', async () => {
    const { sessionId, useId } = callInLog();
    const outcome = await callThroughWorker(host.dialIn, { sessionId, environmentId: envId, toolUseId: useId, claimTimeoutMs: 50 });
    expect(outcome.isError).toBe(true);
    expect(outcome.content).toMatch(/no self-hosted worker claimed this session's work .* within 50 ms\. Start one .*npx corral-worker --url URL --environment env_/);
  });

  it("the window cannot post a worker's user.tool_result (only a worker with a live lease can, over HTTP)", () => {
    const { sessionId, useId } = callInLog();
    expect(() => sessionCalls(host).sendEvent({ sessionId, event: { type: 'user.tool_result', tool_use_id: useId } as never })).toThrow(/posted by self-hosted workers through the HTTP API/);
    expect(host.log.getEvents(sessionId, { types: ['user.tool_result'] })).toEqual([]);
  });
});
